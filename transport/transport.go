// Package transport is what stands between Decoy's listening socket and
// net/http: caps on connections, net/http's own plain-text answers to
// requests it cannot parse rewritten as Decoy's JSON errors, and TLS.
//
// net/http reads and parses every request; nothing here reads a byte of a
// request. The one thing written here is the rewrite of net/http's fixed
// error answers, recognised on their way out.
package transport
