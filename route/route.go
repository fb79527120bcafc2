// Package route parses routes' path templates and matches requests against
// a project's routes (§11.2 and §11.3 of the contract). It knows nothing of
// HTTP servers or stores: the admin API validates a route with Validate,
// the server compiles a project's routes with Compile when they change and
// asks the Table which route answers each request.
//
// A Table is a tree with one level per path segment, as Go's ServeMux
// (1.22) and httprouter build theirs: each node has its literal children,
// by decoded text, and at most one parameter child, shared by every
// parameter name at that position. Precedence is in the walk, not in a
// sorted list: Match walks depth first, trying the literal child of a
// segment before the parameter child, and backs up to the parameter child
// when the literal branch has no route for the rest of the path. The first
// route found is therefore the one with a literal at the leftmost position
// where the matching templates differ: /users/me before /users/{id}, and
// /a/{x}/c before /{y}/b/c for the request /a/b/c. Only routes of the
// request's method take part (HEAD takes GET's); the methods of the other
// routes whose path matches are the Allow of a 405.
//
// The cost of a match is the depth of the path, not the number of routes:
// a node finds a literal child in a short slice or a map, and a branch is
// entered only when a route of the method lies under it. Backing up can
// visit more than one branch per segment, but never a node twice: a project
// whose routes are built to defeat the tree (every mix of a literal and a
// parameter at each position, 8,192 routes) makes a miss visit all its
// nodes, about 0.4 ms, as it would in ServeMux; at worst a match costs what
// trying every route would. A match allocates nothing for a path without
// escapes to a route without parameters; otherwise one slice for the
// parameters and one string for all the decoded segments.
package route
