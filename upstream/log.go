package upstream

import (
	"io"
	"log"
)

// discardLog is ReverseProxy's error log: the failures it would log are
// answered (Forward), and the server logs each request.
var discardLog = log.New(io.Discard, "", 0)
