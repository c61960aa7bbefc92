// A small static program the real node's tests run as a container (no shell, no libc in the image):
//
//	bed-app serve [port]   prints lines to stdout and answers HTTP on 0.0.0.0:port (default 8080)
//	bed-app echo WORDS...  prints WORDS (what `exec` runs)
//	bed-app env NAME       prints the variable (what a device plugin's Allocate set)
package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		args = []string{"serve"}
	}
	switch args[0] {
	case "echo":
		fmt.Println(strings.Join(args[1:], " "))
	case "env":
		for _, n := range args[1:] {
			fmt.Printf("%s=%s\n", n, os.Getenv(n))
		}
	case "serve":
		port := "8080"
		if len(args) > 1 {
			port = args[1]
		}
		host, _ := os.Hostname()
		fmt.Printf("bed-app %s: serving on 0.0.0.0:%s\n", host, port)
		fmt.Printf("NVIDIA_VISIBLE_DEVICES=%s\n", os.Getenv("NVIDIA_VISIBLE_DEVICES"))
		http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			fmt.Printf("%s %s\n", r.Method, r.URL.Path)
			fmt.Fprintf(w, "bed-app %s\n", host)
		})
		if err := http.ListenAndServe(":"+port, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "bed-app: unknown command %q\n", args[0])
		os.Exit(2)
	}
}
