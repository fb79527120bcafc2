package main

import (
	"fmt"
	"net/netip"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

// Version returns the version of this build.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		if v != "" {
			return v
		}
	}
	return "(devel)"
}

// envName returns the environment variable of a flag: DECOY_ and the flag
// name in upper case with '-' as '_'.
func envName(flag string) string {
	return "DECOY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag of fs not given on the command line from its
// DECOY_* variable.
func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || f.Name == "help" {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %s", envName(f.Name), v, valueProblem(e))
			}
		}
	})
	return err
}

// byteSize is a flag value of bytes, written as a number with an optional
// unit: 64MiB, 10MB, 512KiB, 1048576.
type byteSize int64

func (b *byteSize) String() string { return formatSize(int64(*b)) }

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	n, err := parseSize(s, false)
	*b = byteSize(n)
	return err
}

// boundSize is a byteSize where 0 means no bound.
type boundSize int64

func (b *boundSize) String() string { return formatSize(int64(*b)) }

func (b *boundSize) Type() string { return "size" }

func (b *boundSize) Set(s string) error {
	n, err := parseSize(s, true)
	*b = boundSize(n)
	return err
}

// parseSize reads a number of bytes with an optional unit; zero only when
// zero is allowed.
func parseSize(s string, zero bool) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n == 0 && !zero || n > (1<<62)/mult {
		hint := "; more than 0"
		if zero {
			hint = "; 0 for no bound"
		}
		return 0, fmt.Errorf("invalid size %q (use bytes, or a number with KiB, MiB, GiB, KB, MB, GB%s)", s, hint)
	}
	return n * mult, nil
}

// formatSize writes a byte count the way byteSize reads it.
func formatSize(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}

// listFlag is a comma-separated list.
type listFlag []string

// prefixFlag is a comma-separated list of CIDR prefixes; a bare address is
// a prefix of one address.
type prefixFlag []netip.Prefix

func (p *prefixFlag) String() string {
	var s []string
	for _, x := range *p {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}

func (p *prefixFlag) Type() string { return "prefixes" }

func (p *prefixFlag) Set(s string) error {
	*p = nil
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		pr, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return fmt.Errorf("%q is not a CIDR prefix or an IP address", v)
			}
			pr = netip.PrefixFrom(a, a.BitLen())
		}
		*p = append(*p, pr.Masked())
	}
	return nil
}

// addedPrefixFlag is a prefixFlag given any number of times: each adds
// its prefixes to the others'.
type addedPrefixFlag struct{ prefixFlag }

func (p *addedPrefixFlag) Set(s string) error {
	var more prefixFlag
	if err := more.Set(s); err != nil {
		return err
	}
	p.prefixFlag = append(p.prefixFlag, more...)
	return nil
}

func (l *listFlag) Type() string { return "list" }

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = nil
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}
