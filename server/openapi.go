package server

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openAPI is the OpenAPI 3.1 description of the public endpoint and the
// admin API.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI document the server serves.
func OpenAPI() []byte { return openAPI }

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(openAPI)))
	h.Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(openAPI)
}
