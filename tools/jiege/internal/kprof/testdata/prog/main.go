// Command prog prints what the Go runtime knows of one of its functions
// at a pc 8 bytes past its entry: "name pc file line". kprof's tests
// compare their symbolisation of this binary with it.
package main

import (
	"fmt"
	"reflect"
	"runtime"
)

//go:noinline
func knownFunction(n int) int { return n*3 + 1 }

func main() {
	f := runtime.FuncForPC(reflect.ValueOf(knownFunction).Pointer())
	pc := f.Entry() + 8
	file, line := f.FileLine(pc)
	fmt.Println(f.Name(), pc, file, line, knownFunction(1))
}
