// Package transport is what stands between Decoy's listening socket and
// net/http: caps on connections, net/http's own plain-text answers to
// requests it cannot parse rewritten as Decoy's JSON errors, and TLS.
//
// net/http reads and parses every request; nothing here reads a byte of a
// request. The TLS handshake is done here, before net/http is handed the
// connection, so that a connection that chose HTTP/2 goes to net/http's
// HTTP/2 server as it is and one that speaks HTTP/1.x goes with its error
// answers rewritten. What is written here: the rewrite of net/http's fixed
// error answers, recognised on their way out, and the answers a handler
// gathers (see Gather), which leave in one write rather than net/http's
// several. The answers written here carry header lines the server gives
// (its CORS policy): with no request parsed, they cannot depend on one.
package transport
