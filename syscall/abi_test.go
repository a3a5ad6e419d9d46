package syscall

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestABIStructsAreCLayout type-checks this package and finds every type
// that copyOutStruct, copyOutStructs and copyInStruct are called with: each
// must be fixed-size integers, arrays and structures of them, without
// implicit padding on riscv64, so that its Go memory is the C structure.
func TestABIStructsAreCLayout(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// The imports' export data, as the go command built it.
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok {
			exports[path] = file
		}
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) }
	info := &types.Info{Instances: map[*ast.Ident]types.Instance{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	if _, err := conf.Check("github.com/jiege-go/jiege/syscall", fset, files, info); err != nil {
		t.Fatal(err)
	}
	sizes := types.SizesFor("gc", "riscv64")
	checked := 0
	for id, inst := range info.Instances {
		switch id.Name {
		case "copyOutStruct", "copyOutStructs", "copyInStruct":
		default:
			continue
		}
		arg := inst.TypeArgs.At(0)
		if why := cLayout(sizes, arg); why != "" {
			t.Errorf("%s: %s(%s): %s", fset.Position(id.Pos()), id.Name, arg, why)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("found %d calls; the package makes more than 30", checked)
	}
}

// cLayout says why t's Go memory is not a C structure's, or "".
func cLayout(sizes types.Sizes, t types.Type) string {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.Int8, types.Int16, types.Int32, types.Int64, types.Uint8, types.Uint16, types.Uint32, types.Uint64:
			return ""
		}
		return "field of type " + u.String() + ": not a fixed-size integer"
	case *types.Array:
		return cLayout(sizes, u.Elem())
	case *types.Struct:
		fields := make([]*types.Var, u.NumFields())
		next := int64(0)
		for i := range fields {
			fields[i] = u.Field(i)
		}
		for i, off := range sizes.Offsetsof(fields) {
			if off != next {
				return "padding before field " + fields[i].Name()
			}
			if why := cLayout(sizes, fields[i].Type()); why != "" {
				return why
			}
			next = off + sizes.Sizeof(fields[i].Type())
		}
		if next != sizes.Sizeof(u) {
			return "padding at the end"
		}
		return ""
	}
	return t.String() + " is not a structure of integers"
}
