package main

import (
	"fmt"
	"strings"
	"time"
)

// parseArgs separates positional arguments from --name VALUE / --name=VALUE
// flags, which may appear anywhere (the standard flag package stops at the
// first positional argument, but the harness writes `tcp HOST:PORT
// --timeout 1s`). flags maps each accepted name to where its value goes.
// Errors never quote values, only flag names.
func parseArgs(args []string, flags map[string]*string) ([]string, error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(positional, args[i+1:]...), nil
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		dst, ok := flags[name]
		if !ok {
			return nil, fmt.Errorf("unknown flag --%s", name)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			value = args[i]
		}
		*dst = value
	}
	return positional, nil
}

// parseTimeout parses a Go duration ("3s", "500ms"), or returns def when
// raw is empty.
func parseTimeout(raw string, def time.Duration) (time.Duration, error) {
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--timeout must be a positive duration such as 3s or 500ms")
	}
	return d, nil
}
