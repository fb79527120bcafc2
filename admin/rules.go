package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/rule"
)

// Rules (§13.1 of the contract): a route's conditional answers, set with
// the route (POST, PATCH: field rules) and checked here as templates are
// (package rule); POST /routes/{route}/rules/reset starts the counts of
// rules with times again, as every change to a route's rules does.

// maxRouteBytes bounds the body of a route's POST or PATCH: its rules may
// hold bodies and templates.
const maxRouteBytes = 1 << 20

// decodeRules reads the rules field of a route's body: an array of
// rules, each read strictly (an unknown field is an error naming the
// rule); null is none.
func decodeRules(raw json.RawMessage) ([]decoy.Rule, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid rules: an array of rules")
	}
	if len(items) > decoy.MaxRules {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid rules: a route has at most %d rules", decoy.MaxRules)
	}
	rules := make([]decoy.Rule, len(items))
	for i, item := range items {
		if err := parseStrict(item, &rules[i]); err != nil {
			var named struct { // named as Check names it, when it has a name
				Name string `json:"name"`
			}
			_ = json.Unmarshal(item, &named)
			return nil, rule.InvalidRule(i, &decoy.Rule{Name: named.Name}, errors.New(ruleDecodeError(err)))
		}
	}
	return rules, nil
}

// parseStrict decodes one JSON object into v, refusing unknown fields.
func parseStrict(raw json.RawMessage, v any) error {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return errors.New("not an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ruleDecodeError says what encoding/json found wrong with a rule, in the
// rule's terms.
func ruleDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return te.Field + " must be " + jsonKind(te.Type.Kind().String())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") +
			" (a rule has name, when, status, headers, delay_ms, body, template, fault and times)"
	}
	return "a rule is a JSON object"
}

// jsonKind names a Go kind as JSON does.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case kind == "map":
		return "an object of strings"
	case kind == "ptr":
		return "a number or null"
	}
	return "a " + kind
}

// checkRules checks a route's rules (§13.1) and tidies them (null bodies
// and templates are none, no rules an empty list). A route with templates
// is checked in a turn of the server's generation, as PUT …/template
// compiles a template.
func (s *API) checkRules(ctx context.Context, rt *decoy.Route) error {
	if rt.Rules == nil {
		rt.Rules = []decoy.Rule{}
	}
	if len(rt.Rules) == 0 {
		return nil
	}
	t, err := route.Parse(rt.Path)
	if err != nil {
		return err
	}
	check := func(lim generate.Limits) error { return rule.Check(rt.Rules, t.Params(), lim) }
	return runRuleCheck(rt.Rules, check, func(f func(generate.Limits) error) error { return s.generating(ctx, f) })
}

// runRuleCheck runs check, in a turn of generation (turn) when a rule has
// a template to compile.
func runRuleCheck(rules []decoy.Rule, check func(generate.Limits) error, turn func(func(generate.Limits) error) error) error {
	for _, r := range rules {
		if len(r.Template) > 0 && string(r.Template) != "null" {
			return turn(check)
		}
	}
	return check(generate.Limits{})
}

// resetRules starts the counts of routes' rules again, after a change to
// them or a deletion of the routes, in one call within resetTimeout (the
// caller may hold writeMu): a change is made whether or not the counts
// could be reset, which is logged (they are then reset by the next change,
// or by POST …/rules/reset, and a deleted route's expire).
func (s *API) resetRules(ctx context.Context, routeIDs ...string) {
	if len(routeIDs) == 0 || s.cfg.RuleCounter == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resetTimeout)
	defer cancel()
	if err := s.cfg.RuleCounter.ResetRules(ctx, routeIDs...); err != nil {
		s.log.Error("rule counts not reset", "routes", routeIDs[:min(len(routeIDs), 10)], "of", len(routeIDs), "err", err)
	}
}

// resetTimeout bounds resetRules.
const resetTimeout = 5 * time.Second

// resetRouteRules is POST /routes/{route}/rules/reset: the counts of the
// route's rules start again, on every replica (they are shared). It
// answers the route.
func (s *API) resetRouteRules(w http.ResponseWriter, r *http.Request, id string) error {
	if s.cfg.RuleCounter == nil {
		return answer.New(http.StatusNotImplemented, "This server counts no rules")
	}
	call := callOf(r)
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := s.cfg.RuleCounter.ResetRules(ctx, id); err != nil {
		return err
	}
	call.auditTarget = routeTarget(call.projectRoute)
	answer.JSON(w, http.StatusOK, call.projectRoute)
	return nil
}
