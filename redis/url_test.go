package redis

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	type want struct {
		addrs            []string
		db               int
		user, password   string
		master           string
		sentinelPassword string
		cluster          bool
		tls              bool
		dial, read       time.Duration
		maxRetries       int
		dialerRetries    int
	}
	// What every URL gets unless it says otherwise.
	def := func(w want) want {
		if w.dial == 0 {
			w.dial = time.Second
		}
		if w.read == 0 {
			w.read = 500 * time.Millisecond
		}
		if w.maxRetries == 0 {
			w.maxRetries = 1
		}
		if w.dialerRetries == 0 {
			w.dialerRetries = 1
		}
		return w
	}
	tests := []struct {
		name string
		url  string
		want want
		err  string // part of the error, when one is expected
	}{
		{name: "single", url: "redis://127.0.0.1:6379/0",
			want: want{addrs: []string{"127.0.0.1:6379"}}},
		{name: "single defaults", url: "redis://",
			want: want{addrs: []string{"localhost:6379"}}},
		{name: "single db and auth", url: "redis://bob:s%40cret@cache:6380/3",
			want: want{addrs: []string{"cache:6380"}, db: 3, user: "bob", password: "s@cret"}},
		{name: "single password only", url: "redis://:pw@cache",
			want: want{addrs: []string{"cache:6379"}, password: "pw"}},
		{name: "single tls", url: "rediss://cache:6380",
			want: want{addrs: []string{"cache:6380"}, tls: true}},
		{name: "single IPv6", url: "redis://[::1]:7000/2",
			want: want{addrs: []string{"[::1]:7000"}, db: 2}},
		{name: "single own timeouts", url: "redis://cache?dial_timeout=3s&read_timeout=2&max_retries=-1&dialer_retries=3",
			want: want{addrs: []string{"cache:6379"}, dial: 3 * time.Second, read: 2 * time.Second, maxRetries: -1, dialerRetries: 3}},
		{name: "single disabled timeout", url: "redis://cache?read_timeout=0",
			want: want{addrs: []string{"cache:6379"}, read: -1}},
		{name: "scheme case", url: "REDIS://cache",
			want: want{addrs: []string{"cache:6379"}}},
		{name: "single unknown option", url: "redis://cache?bogus=1", err: "unexpected option"},
		{name: "single bad db", url: "redis://cache/x", err: "invalid database"},
		{name: "single several hosts", url: "redis://a:1,b:2", err: "several hosts"},
		{name: "single bad dialer_retries", url: "redis://cache?dialer_retries=x", err: "dialer_retries"},

		{name: "cluster", url: "redis+cluster://a:7000,b:7001,c",
			want: want{addrs: []string{"a:7000", "b:7001", "c:6379"}, cluster: true}},
		{name: "cluster one seed", url: "redis+cluster://a:7000/",
			want: want{addrs: []string{"a:7000"}, cluster: true}},
		{name: "cluster auth tls options", url: "rediss+cluster://u:p@[::1]:7000,[::2]:7001/0?read_timeout=1s&read_only=true",
			want: want{addrs: []string{"[::1]:7000", "[::2]:7001"}, user: "u", password: "p", cluster: true, tls: true, read: time.Second}},
		{name: "cluster db", url: "redis+cluster://a:7000/1", err: "only database 0"},
		{name: "cluster db option", url: "redis+cluster://a:7000?db=2", err: "only database 0"},
		{name: "cluster bad port", url: "redis+cluster://a:7000,b:x", err: "invalid port"},
		{name: "cluster empty host", url: "redis+cluster://a:7000,", err: "empty host"},
		{name: "cluster bad option", url: "redis+cluster://a?read_only=maybe", err: "read_only"},

		{name: "sentinel", url: "redis+sentinel://s1:26379,s2/mymaster",
			want: want{addrs: []string{"s1:26379", "s2:26379"}, master: "mymaster"}},
		{name: "sentinel auth db", url: "redis+sentinel://:pw@s1:26380/mymaster?db=4&sentinel_password=spw",
			want: want{addrs: []string{"s1:26380"}, master: "mymaster", db: 4, password: "pw", sentinelPassword: "spw"}},
		{name: "sentinel tls", url: "rediss+sentinel://s1/m",
			want: want{addrs: []string{"s1:26379"}, master: "m", tls: true}},
		{name: "sentinel no master", url: "redis+sentinel://s1:26379", err: "master name"},
		{name: "sentinel nested path", url: "redis+sentinel://s1/m/2", err: "master name"},

		{name: "other scheme", url: "http://cache", err: "scheme"},
		{name: "unknown mode", url: "redis+ring://a", err: "unknown scheme"},
		{name: "not a URL", url: "cache:6379", err: "not a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseURL(tt.url)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := def(tt.want)
			got := want{
				addrs: o.Addrs, db: o.DB, user: o.Username, password: o.Password,
				master: o.MasterName, sentinelPassword: o.SentinelPassword,
				cluster: o.IsClusterMode, tls: o.TLSConfig != nil,
				dial: o.DialTimeout, read: o.ReadTimeout, maxRetries: o.MaxRetries, dialerRetries: o.DialerRetries,
			}
			if !slices.Equal(got.addrs, w.addrs) {
				t.Errorf("addrs = %q, want %q", got.addrs, w.addrs)
			}
			got.addrs, w.addrs = nil, nil
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			if o.WriteTimeout != 500*time.Millisecond {
				t.Errorf("write timeout %v", o.WriteTimeout)
			}
			if o.TLSConfig != nil && (o.IsClusterMode || o.MasterName != "") && o.TLSConfig.ServerName != "" {
				t.Errorf("TLS server name %q fixed for several nodes", o.TLSConfig.ServerName)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://u:secret@h:1/0", "redis://u:xxxxx@h:1/0"},
		{"redis+sentinel://:secret@a,b/m?db=1", "redis+sentinel://:xxxxx@a,b/m?db=1"},
		{"redis+sentinel://a/m?sentinel_password=secret", "redis+sentinel://a/m?(options hidden)"},
		{"redis://h:1", "redis://h:1"},
		{"u:secret@h", "(URL hidden)"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want || strings.Contains(got, "secret") {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Errors never repeat a password.
func TestParseURLErrorsHidePassword(t *testing.T) {
	for _, u := range []string{
		"redis://u:secret@h/x",
		"redis://u:secret@h?bogus=1",
		"redis+cluster://u:secret@h/4",
		"redis://u:secret@h:bad",
		"redis+sentinel://u:secret@h",
	} {
		_, err := parseURL(u)
		if err == nil {
			t.Errorf("%s: no error", u)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error shows the password: %v", u, err)
		}
	}
}
