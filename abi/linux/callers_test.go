package linux

import (
	"go/ast"
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

// encoders are the generic functions that treat a value's memory as its
// ABI encoding: this package's, and the syscall package's copies between
// a structure and user memory.
var encoders = map[string]bool{
	"AsBytes": true, "SliceAsBytes": true, "Decode": true, "Append": true,
	"copyOutStruct": true, "copyOutStructs": true, "copyInStruct": true,
}

// TestCallersUseCLayout type-checks every package of the module that
// imports this one and finds every type the encoders are called with:
// each must have C layout (cLayout), so that its memory is its encoding.
func TestCallersUseCLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-f",
		"{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}\t{{join .Imports \",\"}}",
		"github.com/jiege-go/jiege/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct{ path, dir, files string }
	exports := map[string]string{}
	var users []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			continue
		}
		exports[f[0]] = f[1]
		if f[0] == "github.com/jiege-go/jiege/abi/linux" || strings.Contains(","+f[4]+",", ",github.com/jiege-go/jiege/abi/linux,") {
			users = append(users, pkg{f[0], f[2], f[3]})
		}
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) }
	sizes := types.SizesFor("gc", "riscv64")
	checked := 0
	for _, p := range users {
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range strings.Split(p.files, ",") {
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Instances: map[*ast.Ident]types.Instance{}}
		conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
		if _, err := conf.Check(p.path, fset, files, info); err != nil {
			t.Fatal(err)
		}
		for id, inst := range info.Instances {
			if !encoders[id.Name] {
				continue
			}
			arg := inst.TypeArgs.At(0)
			if _, generic := arg.(*types.TypeParam); generic {
				continue // checked where the caller's caller names the type
			}
			if why := cLayout(sizes, arg); why != "" {
				t.Errorf("%s: %s(%s): %s", fset.Position(id.Pos()), id.Name, arg, why)
			}
			checked++
		}
	}
	if checked < 60 {
		t.Fatalf("found %d calls; the module makes more than 60", checked)
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
