// Command pause is the sandbox ("pause") image of the real-node test: the
// process that holds a pod's namespaces, built here because no registry is
// reachable. It waits until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
