package rule_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/rule"
)

// sample is the request the table tests ask about.
func sample(body string) *rule.Request {
	h := http.Header{}
	h.Add("X-Mode", "Slow")
	h.Add("X-Mode", "fast")
	h.Add("X-User", "bob")
	h.Add("Content-Type", "application/json")
	return &rule.Request{
		Method:   "POST",
		Params:   []route.Param{{Name: "id", Value: "42"}, {Name: "team", Value: "a b/c"}},
		RawQuery: "page=2&page=3&q=caf%C3%A9+au+lait&flag&empty=&p%6Cus=1%2B1&bad=%zz",
		Host:     "api.example.test:8080",
		Header:   h,
		Body:     func() []byte { return []byte(body) },
	}
}

const sampleBody = `{"customer":{"name":"Ann","tags":["vip","new"],"age":30},"items":[{"sku":"A1"},{"sku":"B2"}],"ok":true,"none":null}`

// TestConditionsOverRequests: every target of a condition, with every
// operator, over a request; a part the request lacks is missing (never
// equal, so $ne and $nei hold).
func TestConditionsOverRequests(t *testing.T) {
	cases := []struct {
		when string
		want bool
	}{
		// method
		{"method=POST", true},
		{"method=post", false},
		{"method[$eq]=POST", true},
		{"method[$eqi]=post", true},
		{"method[$ne]=POST", false},
		{"method[$ne]=GET", true},
		{"method[$nei]=post", false},
		{"method[$nei]=get", true},
		// path parameters, decoded
		{"path.id=42", true},
		{"path.id=42.0", false}, // a parameter is text: "42" is no number
		{"path.id[$ne]=42", false},
		{"path.team=a b/c", true},
		{"path.team[$eqi]=A B/C", true},
		{"path.nope=1", false},
		{"path.nope[$ne]=1", true},
		// query parameters: the first of a repeated one counts; decoded
		// as the read endpoint decodes them
		{"query.page=2", true},
		{"query.page=3", false},
		{"query.page[$ne]=3", true},
		{"query.q=café au lait", true},
		{"query.q[$eqi]=CAFÉ AU LAIT", true},
		{"query.flag=", true},
		{"query.empty=", true},
		{"query.plus=1+1", true},
		{"query.bad=%25zz", true},
		{"query.missing=", false},
		{"query.missing[$nei]=x", true},
		// headers: any case on the wire, lower case here; the first value
		{"header.x-mode=Slow", true},
		{"header.x-mode=slow", false},
		{"header.x-mode[$eqi]=slow", true},
		{"header.x-mode=fast", false},
		{"header.x-mode[$nei]=SLOW", false},
		{"header.x-user=bob&header.content-type=application/json", true},
		{"header.host=api.example.test:8080", true},
		{"header.x-none=bob", false},
		{"header.x-none[$ne]=bob", true},
		// the body, nested
		{"body.customer.name=Ann", true},
		{"body.customer.name[$eqi]=ann", true},
		{"body.customer.name[$ne]=Ann", false},
		{"body.customer.age=30", true},
		{"body.customer.age=3e1", true},
		{"body.customer.tags=vip", true},
		{"body.customer.tags[$ne]=vip", false},
		{"body.customer.tags.1=new", true},
		{"body.items.sku=B2", true},
		{"body.ok=true", true},
		{"body.none=null", true},
		{"body.customer.missing=x", false},
		{"body.customer.missing[$ne]=x", true},
		{"body.customer=Ann", false},
		// several, ANDed
		{"method=POST&path.id=42&query.page=2&header.x-user=bob&body.ok=true", true},
		{"method=POST&path.id=43", false},
		{"", true},
	}
	for _, tc := range cases {
		t.Run(tc.when, func(t *testing.T) {
			s := rule.Compile([]decoy.Rule{{When: tc.when}})
			e := s.Eval(sample(sampleBody))
			if got := e.Next(0) == 0; got != tc.want {
				t.Errorf("holds %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBodies: a body that is not JSON, or none, is missing; a body is
// read only when a condition reaches into it, once.
func TestBodies(t *testing.T) {
	for _, body := range []string{"", "not json", `{"a":1} trailing`, `1,"injected":true`, "   "} {
		s := rule.Compile([]decoy.Rule{{When: "body.injected=true"}, {When: "body[$ne]=x&body.a[$ne]=1"}})
		e := s.Eval(sample(body))
		if got := e.Next(0); got != 1 {
			t.Errorf("body %q: rule %d holds, want the second", body, got)
		}
	}
	reads := 0
	req := sample(`{"a":1}`)
	req.Body = func() []byte { reads++; return []byte(`{"a":1}`) }
	s := rule.Compile([]decoy.Rule{{When: "method=GET"}, {When: "header.x-user=bob&query.page=2"}})
	e := s.Eval(req)
	if got := e.Next(0); got != 1 || reads != 0 {
		t.Errorf("rule %d held, the body read %d times; want the second, and no read", got, reads)
	}
	s = rule.Compile([]decoy.Rule{{When: "body.a=2"}, {When: "body.a=1"}, {When: "body.a=1"}})
	e = s.Eval(req)
	if got := e.Next(0); got != 1 {
		t.Errorf("rule %d held, want the second", got)
	}
	if got := e.Next(2); got != 2 || reads != 1 {
		t.Errorf("rule %d held after the second, the body read %d times; want the third, one read", got, reads)
	}
	// A body nested as deep as a document may be is left out, not an
	// error.
	deep := strings.Repeat("[", jsondoc.MaxDepth) + strings.Repeat("]", jsondoc.MaxDepth)
	s = rule.Compile([]decoy.Rule{{When: "body[$ne]=1&method=POST"}})
	e = s.Eval(sample(deep))
	if got := e.Next(0); got != 0 {
		t.Errorf("a deep body: rule %d held, want the first", got)
	}
}

// TestNext: rules are tried in order from the index given; an empty when
// always holds; a stored rule whose conditions no longer parse never does.
func TestNext(t *testing.T) {
	s := rule.Compile([]decoy.Rule{{When: "method=GET"}, {When: "a[$gt]=1"}, {When: "method=POST", Name: "post"}, {}})
	e := s.Eval(sample(""))
	for from, want := range []int{2, 2, 2, 3} {
		if got := e.Next(from); got != want {
			t.Errorf("Next(%d) = %d, want %d", from, got, want)
		}
	}
	if got := e.Next(4); got != -1 {
		t.Errorf("Next past the end = %d", got)
	}
	if l := s.Rule(2).Label(); l != "post" {
		t.Errorf("label %q", l)
	}
	if l := s.Rule(3).Label(); l != "4" {
		t.Errorf("label of the fourth, unnamed: %q", l)
	}
	if rule.Compile(nil) != nil {
		t.Error("no rules compiled to a set")
	}
}

// TestTemplateReadsRequest: a rule's template reads the whole request.
func TestTemplateReadsRequest(t *testing.T) {
	s := rule.Compile([]decoy.Rule{{When: "header.x-user=bob", Template: json.RawMessage(
		`{"id":"{{ request.path.id }}","user":"{{ request.header.x-user }}","ct":"{{ request.header.content-type }}","page":"{{ request.query.page }}",` +
			`"q":"{{ request.query.q }}","name":"{{ request.body.customer.name }}","tags":"{{ request.body.customer.tags }}","m":"{{ request.method }}","none":"{{ request.body.nope }}"}`)}})
	e := s.Eval(sample(sampleBody))
	if e.Next(0) != 0 {
		t.Fatal("the rule does not hold")
	}
	tpl, err := s.Rule(0).Template(generate.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Rule(0).Template(generate.Limits{}); again != tpl {
		t.Error("the template compiled twice")
	}
	out, err := tpl.RunRequest(1, generate.Limits{}, &e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"42","user":"bob","ct":"application/json","page":"2","q":"café au lait","name":"Ann","tags":["vip","new"],"m":"POST","none":null}`
	if string(out) != want {
		t.Errorf("output\n%s\nwant\n%s", out, want)
	}
}

// TestCheckSent: what is refused in rules sent now, but not in those
// stored before (Check takes them): a standard method in another case.
func TestCheckSent(t *testing.T) {
	for _, tc := range []struct {
		when, msg string
	}{
		{"method=post", "Invalid rule 2 (b): when: method post: methods are compared as clients send them, in upper case (POST), or with $eqi"},
		{"query.a=1&method[$ne]=Get", "Invalid rule 2 (b): when: method Get: methods are compared as clients send them, in upper case (GET), or with $eqi"},
		{"method=POST", ""},
		{"method[$eqi]=post", ""},
		{"method=purge", ""}, // a method of its own
	} {
		rules := []decoy.Rule{{Name: "a"}, {Name: "b", When: tc.when}}
		err := rule.CheckSent(rules)
		if got := decoy.ErrorMessage(err); got != tc.msg {
			t.Errorf("%s: %q, want %q", tc.when, got, tc.msg)
		}
		if err := rule.Check(rules, nil, generate.Limits{}); err != nil {
			t.Errorf("%s: Check refused it: %v", tc.when, err)
		}
	}
}

// TestCheck: what Check refuses, naming the rule.
func TestCheck(t *testing.T) {
	status := func(n int) *int { return &n }
	times := func(n int64) *int64 { return &n }
	params := []string{"id"}
	cases := []struct {
		name string
		r    decoy.Rule
		msg  string // "" for none
	}{
		{"empty", decoy.Rule{}, ""},
		{"all", decoy.Rule{Name: "slow", When: "method=GET&path.id[$ne]=1&query.a=b&header.x-mode[$eqi]=slow&body.a.b=1", Status: status(503),
			Headers: map[string]string{"Retry-After": "1", "X-Why": "a\tb"}, DelayMS: 30000, Body: json.RawMessage(`{"e":1}`), Times: times(1)}, ""},
		{"operator", decoy.Rule{Name: "slow", When: "method[$gt]=1"}, "Invalid rule 1 (slow): when: Unsupported operator: $gt"},
		{"filter", decoy.Rule{When: "method"}, "Invalid rule 1: when: Invalid filter: method"},
		{"target", decoy.Rule{When: "cookie.a=1"}, "Invalid rule 1: when: cookie.a: a rule reads the request's method, path.<param>, query.<name>, header.<name> or body.<path>"},
		{"no param", decoy.Rule{When: "path.team=a"}, "Invalid rule 1: when: path.team: the route's path has no parameter {team}"},
		{"path alone", decoy.Rule{When: "path=a"}, "Invalid rule 1: when: path: name a parameter of the route's path (path.<param>)"},
		{"method field", decoy.Rule{When: "method.a=a"}, "Invalid rule 1: when: method.a: the method is text, with no fields"},
		{"query field", decoy.Rule{When: "query.a.b=a"}, "Invalid rule 1: when: query.a.b: a query parameter's value is text, with no fields"},
		{"header case", decoy.Rule{When: "header.X-Mode=a"}, "Invalid rule 1: when: header.X-Mode: header names are written in lower case (header.x-mode)"},
		{"status", decoy.Rule{Status: status(99)}, "Invalid rule 1: status must be an HTTP status from 200 to 599"},
		{"status high", decoy.Rule{Status: status(600)}, "Invalid rule 1: status must be an HTTP status from 200 to 599"},
		{"delay", decoy.Rule{DelayMS: 30001}, "Invalid rule 1: delay_ms must be from 0 to 30000"},
		{"negative delay", decoy.Rule{DelayMS: -1}, "Invalid rule 1: delay_ms must be from 0 to 30000"},
		{"times", decoy.Rule{Times: times(0)}, "Invalid rule 1: times must be 1 or more (leave it out for every time)"},
		{"both", decoy.Rule{Body: json.RawMessage(`1`), Template: json.RawMessage(`2`)}, "Invalid rule 1: body and template: give one or the other"},
		{"null body", decoy.Rule{Body: json.RawMessage(`null`), Template: json.RawMessage(`2`)}, ""},
		{"fault", decoy.Rule{Fault: "drop"}, "Invalid rule 1: fault must be reset, empty or malformed"},
		{"reset with status", decoy.Rule{Fault: decoy.FaultReset, Status: status(500)}, "Invalid rule 1: a fault of reset answers nothing: it takes no status, headers, body or template"},
		{"empty with body", decoy.Rule{Fault: decoy.FaultEmpty, Body: json.RawMessage(`{}`)}, "Invalid rule 1: a fault of empty answers nothing: it takes no status, headers, body or template"},
		{"reset with times and delay", decoy.Rule{Fault: decoy.FaultReset, Times: times(2), DelayMS: 10, When: "method=GET"}, ""},
		{"malformed with all", decoy.Rule{Fault: decoy.FaultMalformed, Status: status(200), Headers: map[string]string{"X-A": "1"}, Body: json.RawMessage(`[1,2,3]`)}, ""},
		{"header name", decoy.Rule{Headers: map[string]string{"Bad Name": "1"}}, `Invalid rule 1: headers: "Bad Name" is not a header name`},
		{"hop by hop", decoy.Rule{Headers: map[string]string{"Connection": "close"}}, "Invalid rule 1: headers: Connection is the server's to set"},
		{"content length", decoy.Rule{Headers: map[string]string{"content-length": "3"}}, "Invalid rule 1: headers: content-length is the server's to set"},
		{"header value", decoy.Rule{Headers: map[string]string{"X-A": "a\r\nX-B: b"}}, "Invalid rule 1: headers: the value of X-A must be text of at most 8192 bytes, without line breaks"},
		{"template", decoy.Rule{Template: json.RawMessage(`{"a":"{{ nmae }}"}`)}, `Invalid rule 1: template: $.a: unknown function "nmae"`},
		{"template reads", decoy.Rule{Template: json.RawMessage(`{"a":"{{ request.path.team }}"}`)}, "Invalid rule 1: template: request.path.team: the route's path has no parameter {team}"},
		{"template reads header", decoy.Rule{Template: json.RawMessage(`{"a":"{{ request.header.X-User }}"}`)}, "Invalid rule 1: template: request.header.X-User: header names are written in lower case (header.x-user)"},
		{"template ok", decoy.Rule{Template: json.RawMessage(`{"a":"{{ request.path.id }}","b":"{{ name }}"}`)}, ""},
		{"name", decoy.Rule{Name: "a\nb"}, "Invalid rule 1: name must be text of at most 200 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := []decoy.Rule{tc.r}
			err := rule.Check(rules, params, generate.Limits{})
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if decoy.ErrorCode(err) != decoy.EINVALID || decoy.ErrorMessage(err) != tc.msg {
				t.Fatalf("error %v, want %q", err, tc.msg)
			}
		})
	}
	// The rule is named by its place.
	rules := []decoy.Rule{{}, {Name: "slow", When: "a[$gt]=1"}}
	if err := rule.Check(rules, nil, generate.Limits{}); decoy.ErrorMessage(err) != "Invalid rule 2 (slow): when: Unsupported operator: $gt" {
		t.Errorf("error %v", err)
	}
	// null is none.
	rules = []decoy.Rule{{Body: json.RawMessage(` null `), Template: json.RawMessage(`null`)}}
	if err := rule.Check(rules, nil, generate.Limits{}); err != nil || rules[0].Body != nil || rules[0].Template != nil {
		t.Errorf("null body and template: %v, %+v", err, rules[0])
	}
	if err := rule.Check(make([]decoy.Rule, decoy.MaxRules+1), nil, generate.Limits{}); decoy.ErrorMessage(err) != "Invalid rules: a route has at most 100 rules" {
		t.Errorf("too many: %v", err)
	}
	big := []decoy.Rule{{Body: json.RawMessage(`"` + strings.Repeat("x", decoy.MaxRulesBytes) + `"`)}}
	if err := rule.Check(big, nil, generate.Limits{}); decoy.ErrorMessage(err) != "Invalid rules: a route's rules are at most 64 KiB of JSON (65 KiB here)" {
		t.Errorf("too large: %v", err)
	}
}

// FuzzRequestConditions asks conditions of arbitrary requests. It never
// panics, and a rule holds exactly when the read endpoint's filters of the
// same text keep the request's whole document: the laziness (a document
// of the parts reached) changes nothing. That document is also checked
// against the request it was made from, decoded by encoding/json.
func FuzzRequestConditions(f *testing.F) {
	f.Add("GET", "id", "42", "page=2&page=3&q=a+b", "X-Mode", "slow", sampleBody, "path.id=42&query.page=2&header.x-mode[$eqi]=SLOW")
	f.Add("POST", "team", "a%2Fb", "x=%zz&x=1", "Content-Type", "text/plain", `"just text"`, "body=just text&query.x=%25zz")
	f.Add("DELETE", "k", "\x00\"\\", "", "X-Odd", "tab\there", `[1,{"a":[2]}]`, "body.a=2&body.1.a[$ne]=3&header.x-odd[$ne]=x")
	f.Fuzz(func(t *testing.T, method, param, value, rawQuery, header, hvalue, body, when string) {
		h := http.Header{}
		if header != "" {
			h.Add(header, hvalue)
		}
		req := &rule.Request{Method: method, Params: []route.Param{{Name: param, Value: value}}, RawQuery: rawQuery,
			Host: "h", Header: h, Body: func() []byte { return []byte(body) }}
		s := rule.Compile([]decoy.Rule{{When: when}})
		e := s.Eval(req)
		got := e.Next(0) == 0
		// The whole document, as a template reads it.
		full := s.Eval(req)
		raw, ok := full.Lookup(nil)
		if !ok {
			t.Fatal("the whole request reaches nothing")
		}
		doc, err := jsondoc.Parse(append(append([]byte("["), raw...), ']'))
		if err != nil {
			t.Fatalf("the request's document %s: %v", raw, err)
		}
		q, err := query.Compile(query.Params{Filters: when})
		if err != nil {
			if got {
				t.Fatalf("%q does not parse, and holds", when)
			}
			return
		}
		if want := q.Run(doc).Total == 1; got != want {
			t.Fatalf("when %q over %s: holds %v, the filters keep it %v", when, raw, got, want)
		}
		if valid(method, param, value, rawQuery, header, hvalue) {
			checkDocument(t, raw, req, body)
		}
	})
}

// checkDocument checks the request's whole document against the request,
// decoded the obvious way.
func checkDocument(t *testing.T, raw []byte, req *rule.Request, body string) {
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	want := map[string]any{"method": req.Method, "path": map[string]any{req.Params[0].Name: req.Params[0].Value}}
	q := map[string]any{}
	for _, piece := range strings.Split(req.RawQuery, "&") {
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		k = query.Unescape(k, true)
		if _, seen := q[k]; !seen {
			q[k] = query.Unescape(v, true)
		}
	}
	want["query"] = q
	hs := map[string]any{"host": req.Host}
	for name, vs := range req.Header {
		if lower := strings.ToLower(name); lower != "host" {
			hs[lower] = vs[0]
		}
	}
	want["header"] = hs
	var b any
	if json.Valid([]byte(body)) && strings.TrimSpace(body) != "" && json.Unmarshal([]byte(body), &b) == nil && depthOK(body) {
		want["body"] = b
	}
	g, _ := json.Marshal(got)
	// A query's name or value may unescape to bytes that are not UTF-8
	// (%80): the document holds U+FFFD for each, and so does want once
	// encoded and read back.
	w, _ := json.Marshal(want)
	var back any
	json.Unmarshal(w, &back)
	w, _ = json.Marshal(back)
	if !bytes.Equal(g, w) {
		t.Fatalf("document %s\nwant %s", g, w)
	}
}

// depthOK reports whether a body nests shallowly enough to sit in the
// request's document.
func depthOK(body string) bool {
	_, err := jsondoc.Parse([]byte("[{\"body\":" + body + "}]"))
	return err == nil
}

// valid reports whether every text is UTF-8 (encoding/json would replace
// invalid bytes; the document keeps them).
func valid(texts ...string) bool {
	for _, s := range texts {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// BenchmarkEval asks a request 20 rules none of which holds: on one
// header, and on the method, a query parameter, two headers and the body
// (server's BenchmarkRules has the same).
func BenchmarkEval(b *testing.B) {
	header := make([]decoy.Rule, 20)
	mixed := make([]decoy.Rule, 20)
	for i := range header {
		header[i] = decoy.Rule{When: "header.x-scenario=case-" + strconv.Itoa(i)}
		n := strconv.Itoa(i)
		switch i % 4 {
		case 0:
			mixed[i].When = "method=POST&query.page=" + n
		case 1:
			mixed[i].When = "header.x-scenario=case-" + n + "&header.accept-encoding[$eqi]=none"
		case 2:
			mixed[i].When = "query.order_by[$ne]=age&query.x=" + n
		default:
			mixed[i].When = "body.kind=k" + n
		}
	}
	for _, c := range []struct {
		name  string
		rules []decoy.Rule
	}{{"header", header}, {"mixed", mixed}} {
		b.Run(c.name, func(b *testing.B) {
			s := rule.Compile(c.rules)
			req := &rule.Request{Method: "GET", RawQuery: "order_by=age&limit=10", Host: "bench",
				Header: map[string][]string{"X-Scenario": {"none"}, "Accept-Encoding": {"gzip, deflate, br"}}}
			b.ReportAllocs()
			var e rule.Eval
			for b.Loop() {
				e.Reset(s, req) // as the server does, from a pool
				if e.Next(0) != -1 {
					b.Fatal("a rule holds")
				}
			}
		})
	}
}

// An Eval kept from request to request (the server pools them) keeps a
// small buffer, not one a large body grew: each pooled Eval held its
// largest body's copy (found by a review).
func TestResetLetsLargeBufferGo(t *testing.T) {
	s := rule.Compile([]decoy.Rule{{When: "body.kind=x"}})
	var e rule.Eval
	for _, c := range []struct {
		size int
		kept bool
	}{{10, true}, {1 << 20, false}, {1000, true}} {
		body := []byte(`{"kind":"` + strings.Repeat("y", c.size) + `"}`)
		req := &rule.Request{Method: "POST", Body: func() []byte { return body }}
		e.Reset(s, req)
		if e.Next(0) != -1 {
			t.Fatal("a rule holds")
		}
		e.Reset(nil, nil)
		if kept := rule.BufCap(&e) > 0; kept != c.kept {
			t.Errorf("after a body of %d bytes: a buffer of %d bytes kept", c.size, rule.BufCap(&e))
		}
	}
}
