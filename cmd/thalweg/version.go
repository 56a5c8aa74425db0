package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "dev"

func cmdVersion(_ context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("version", "version", env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(env.stdout, "thalweg %s%s %s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
