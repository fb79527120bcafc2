// Package dataset generates deterministic users documents for benchmarks:
// nested address.city and address.geo, status, age, createdAt (YYYY-MM-DD)
// and tags, the same bytes for the same size on every run.
package dataset

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

var (
	cities   = []string{"Paris", "Lyon", "London", "Berlin", "Madrid", "Lisbon", "New York", "Toronto", "Tokyo", "Sydney", "Zürich", "Kraków"}
	statuses = []string{"active", "Active", "inactive", "pending", "suspended"}
	tags     = []string{"beta", "newsletter", "vip", "trial", "enterprise", "churn-risk"}
	names    = []string{"Ava", "Liam", "Emma", "Noah", "Olivia", "Lucas", "Mia", "Hugo", "Léa", "Mateo", "Chloé", "Jonas"}
)

// Users returns a JSON array of n user records, about 250 bytes each.
func Users(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 42))
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	b := make([]byte, 0, n*260)
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',', '\n')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `,"name":"`...)
		b = append(b, names[r.IntN(len(names))]...)
		b = fmt.Appendf(b, ` %c. User %d","email":"user%d@example.com","age":`, 'A'+r.IntN(26), i+1, i+1)
		b = strconv.AppendInt(b, int64(18+r.IntN(70)), 10)
		b = append(b, `,"status":"`...)
		b = append(b, statuses[r.IntN(len(statuses))]...)
		b = append(b, `","createdAt":"`...)
		b = start.AddDate(0, 0, r.IntN(2500)).AppendFormat(b, "2006-01-02")
		b = append(b, `","address":{"city":"`...)
		b = append(b, cities[r.IntN(len(cities))]...)
		b = fmt.Appendf(b, `","zip":"%05d","geo":{"lat":%.4f,"lng":%.4f}},"tags":[`, r.IntN(100000), r.Float64()*180-90, r.Float64()*360-180)
		for k, t := range r.Perm(len(tags))[:r.IntN(4)] {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, tags[t]...)
			b = append(b, '"')
		}
		b = append(b, `],"score":`...)
		b = strconv.AppendFloat(b, float64(r.IntN(10000))/100, 'f', -1, 64)
		b = append(b, '}')
	}
	return append(b, ']', '\n')
}
