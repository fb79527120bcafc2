// Command examplegen writes the example mocks in examples/: users, products
// and orders, a few hundred realistic records each, the same on every run.
//
//	go run ./internal/examplegen -out examples
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "examples", "folder to write the .json files to")
	flag.Parse()
	for name, data := range Generate() {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// Generate returns the example files by name.
func Generate() map[string][]byte {
	r := rand.New(rand.NewPCG(2026, 11))
	users := makeUsers(r, 300)
	products := makeProducts(r, 200)
	orders := makeOrders(r, 300, users, products)
	return map[string][]byte{
		"users.json":    encode(users),
		"products.json": encode(products),
		"orders.json":   encode(orders),
	}
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

type city struct {
	Name, Country, Zip string
	Lat, Lng           float64
}

var cities = []city{
	{"Paris", "FR", "75001", 48.8566, 2.3522}, {"Lyon", "FR", "69001", 45.764, 4.8357},
	{"London", "GB", "EC1A", 51.5072, -0.1276}, {"Berlin", "DE", "10115", 52.52, 13.405},
	{"Madrid", "ES", "28001", 40.4168, -3.7038}, {"Lisbon", "PT", "1100", 38.7223, -9.1393},
	{"New York", "US", "10001", 40.7128, -74.006}, {"San Francisco", "US", "94103", 37.7749, -122.4194},
	{"Toronto", "CA", "M5H", 43.6532, -79.3832}, {"São Paulo", "BR", "01000", -23.5505, -46.6333},
	{"Tokyo", "JP", "100-0001", 35.6762, 139.6503}, {"Sydney", "AU", "2000", -33.8688, 151.2093},
	{"Zürich", "CH", "8001", 47.3769, 8.5417}, {"Kraków", "PL", "30-001", 50.0647, 19.945},
}

var (
	firstNames = []string{"Ava", "Liam", "Emma", "Noah", "Olivia", "Lucas", "Mia", "Hugo", "Léa", "Mateo", "Chloé", "Jonas",
		"Sofia", "Elias", "Zoé", "Arthur", "Inès", "Leon", "Maya", "Oscar", "Nora", "Felix", "Amélie", "Yuki", "Aiko", "Ravi", "Priya", "Tomás"}
	lastNames = []string{"Martin", "Smith", "Müller", "García", "Silva", "Dubois", "Rossi", "Nowak", "Tanaka", "Johnson", "Brown",
		"Lefèvre", "Fernández", "Schmidt", "Kowalski", "Williams", "Moreau", "Costa", "Sato", "Patel", "O'Brien", "Novak"}
	streets     = []string{"Oak Street", "Rue de la Paix", "High Street", "Hauptstraße", "Calle Mayor", "Main Avenue", "Maple Road", "Via Roma", "Elm Lane"}
	statuses    = []string{"active", "active", "active", "inactive", "pending", "suspended"}
	roles       = []string{"user", "user", "user", "editor", "admin"}
	userTags    = []string{"beta", "newsletter", "vip", "early-adopter", "churn-risk", "enterprise", "trial"}
	departments = []string{"Sales", "Engineering", "Support", "Marketing", "Finance"}
	companies   = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Enterprises"}
)

type geo struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

type address struct {
	Street  string `json:"street"`
	City    string `json:"city"`
	Zip     string `json:"zip"`
	Country string `json:"country"`
	Geo     geo    `json:"geo"`
}

type company struct {
	Name       string `json:"name"`
	Department string `json:"department"`
}

type user struct {
	ID        int      `json:"id"`
	Name      string   `json:"name"`
	Username  string   `json:"username"`
	Email     string   `json:"email"`
	Age       int      `json:"age"`
	Status    string   `json:"status"`
	Role      string   `json:"role"`
	Verified  bool     `json:"verified"`
	CreatedAt string   `json:"createdAt"`
	LastLogin *string  `json:"lastLogin"`
	Address   address  `json:"address"`
	Company   company  `json:"company"`
	Tags      []string `json:"tags"`
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func day(r *rand.Rand, from time.Time, spanDays int) time.Time {
	return from.AddDate(0, 0, r.IntN(spanDays))
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

func ascii(s string) string {
	repl := strings.NewReplacer("é", "e", "è", "e", "É", "e", "ü", "u", "ö", "o", "ß", "ss", "í", "i", "á", "a", "ã", "a", "ó", "o", "'", "")
	return strings.ToLower(repl.Replace(s))
}

func subset(r *rand.Rand, xs []string, most int) []string {
	n := r.IntN(most + 1)
	perm := r.Perm(len(xs))[:n]
	out := make([]string, 0, n)
	for _, i := range perm {
		out = append(out, xs[i])
	}
	return out
}

func makeUsers(r *rand.Rand, n int) []user {
	start := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	users := make([]user, n)
	for i := range users {
		first, last := pick(r, firstNames), pick(r, lastNames)
		c := pick(r, cities)
		created := day(r, start, 1400)
		u := user{
			ID:        i + 1,
			Name:      first + " " + last,
			Username:  fmt.Sprintf("%s.%s%d", ascii(first), ascii(last), i+1),
			Age:       18 + r.IntN(60),
			Status:    pick(r, statuses),
			Role:      pick(r, roles),
			Verified:  r.IntN(4) != 0,
			CreatedAt: created.Format("2006-01-02"),
			Address: address{
				Street:  fmt.Sprintf("%d %s", 1+r.IntN(200), pick(r, streets)),
				City:    c.Name,
				Zip:     c.Zip,
				Country: c.Country,
				Geo:     geo{round(c.Lat+r.Float64()*0.1-0.05, 4), round(c.Lng+r.Float64()*0.1-0.05, 4)},
			},
			Company: company{pick(r, companies), pick(r, departments)},
			Tags:    subset(r, userTags, 3),
		}
		u.Email = u.Username + "@example.com"
		if r.IntN(5) != 0 {
			s := day(r, created, 500).Format(time.RFC3339)
			u.LastLogin = &s
		}
		users[i] = u
	}
	return users
}

type variant struct {
	SKU   string  `json:"sku"`
	Color string  `json:"color"`
	Size  *string `json:"size"`
	Stock int     `json:"stock"`
}

type product struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Category   string         `json:"category"`
	Brand      string         `json:"brand"`
	Price      float64        `json:"price"`
	Currency   string         `json:"currency"`
	InStock    bool           `json:"inStock"`
	Rating     float64        `json:"rating"`
	Reviews    int            `json:"reviews"`
	Tags       []string       `json:"tags"`
	Variants   []variant      `json:"variants"`
	Dimensions map[string]any `json:"dimensions"`
	CreatedAt  string         `json:"createdAt"`
}

var (
	categories = map[string][]string{
		"Electronics": {"Wireless Earbuds", "USB-C Charger", "Bluetooth Speaker", "Smart Watch", "Mechanical Keyboard", "4K Monitor"},
		"Clothing":    {"Cotton T-Shirt", "Rain Jacket", "Wool Sweater", "Running Shorts", "Denim Jeans"},
		"Home":        {"Ceramic Mug", "Desk Lamp", "Throw Blanket", "Chef's Knife", "French Press"},
		"Sports":      {"Yoga Mat", "Water Bottle", "Trail Shoes", "Resistance Bands", "Bike Helmet"},
		"Books":       {"Field Guide", "Cookbook", "Travel Journal", "Sketchbook"},
	}
	categoryNames = []string{"Books", "Clothing", "Electronics", "Home", "Sports"}
	brands        = []string{"Northwind", "Contoso", "Fabrikam", "Tailspin", "Litware", "Adatum"}
	colors        = []string{"black", "white", "red", "blue", "green", "grey"}
	sizes         = []string{"XS", "S", "M", "L", "XL"}
	productTags   = []string{"new", "sale", "bestseller", "eco", "limited", "gift"}
)

func makeProducts(r *rand.Rand, n int) []product {
	start := time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC)
	products := make([]product, n)
	for i := range products {
		cat := pick(r, categoryNames)
		p := product{
			ID:        fmt.Sprintf("SKU-%d", 1001+i),
			Name:      pick(r, categories[cat]),
			Category:  cat,
			Brand:     pick(r, brands),
			Price:     round(4.99+r.Float64()*300, 2),
			Currency:  "EUR",
			Rating:    round(1+r.Float64()*4, 1),
			Reviews:   r.IntN(2500),
			Tags:      subset(r, productTags, 3),
			CreatedAt: day(r, start, 900).Format("2006-01-02"),
			Dimensions: map[string]any{
				"weightKg": round(0.05+r.Float64()*5, 2),
				"widthCm":  5 + r.IntN(60),
				"heightCm": 2 + r.IntN(40),
			},
		}
		for k, c := range subset(r, colors, 3) {
			v := variant{SKU: fmt.Sprintf("%s-%d", p.ID, k+1), Color: c, Stock: r.IntN(40)}
			if cat == "Clothing" || cat == "Sports" {
				s := pick(r, sizes)
				v.Size = &s
			}
			p.InStock = p.InStock || v.Stock > 0
			p.Variants = append(p.Variants, v)
		}
		if p.Variants == nil {
			p.Variants = []variant{}
		}
		products[i] = p
	}
	return products
}

type orderItem struct {
	SKU      string  `json:"sku"`
	Name     string  `json:"name"`
	Quantity int     `json:"quantity"`
	Price    float64 `json:"price"`
}

type shipping struct {
	Method  string `json:"method"`
	Carrier string `json:"carrier"`
	Address struct {
		City    string `json:"city"`
		Country string `json:"country"`
	} `json:"address"`
}

type order struct {
	ID          string      `json:"id"`
	UserID      int         `json:"userId"`
	Status      string      `json:"status"`
	CreatedAt   string      `json:"createdAt"`
	ShippedAt   *string     `json:"shippedAt"`
	DeliveredAt *string     `json:"deliveredAt"`
	Total       float64     `json:"total"`
	Currency    string      `json:"currency"`
	Paid        bool        `json:"paid"`
	Items       []orderItem `json:"items"`
	Shipping    shipping    `json:"shipping"`
	Coupon      *string     `json:"coupon"`
}

var (
	orderStatuses = []string{"pending", "paid", "shipped", "shipped", "delivered", "delivered", "delivered", "cancelled", "refunded"}
	methods       = []string{"standard", "express", "pickup"}
	carriers      = []string{"DHL", "UPS", "La Poste", "FedEx", "GLS"}
	coupons       = []string{"WELCOME10", "SPRING24", "FREESHIP"}
)

func makeOrders(r *rand.Rand, n int, users []user, products []product) []order {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	orders := make([]order, n)
	for i := range orders {
		u := pick(r, users)
		created := day(r, start, 700)
		o := order{
			ID:        fmt.Sprintf("ORD-%d-%05d", created.Year(), i+1),
			UserID:    u.ID,
			Status:    pick(r, orderStatuses),
			CreatedAt: created.Format("2006-01-02"),
			Currency:  "EUR",
		}
		total := 0.0
		for k := 0; k < 1+r.IntN(4); k++ {
			p := pick(r, products)
			item := orderItem{SKU: p.ID, Name: p.Name, Quantity: 1 + r.IntN(3), Price: p.Price}
			total += float64(item.Quantity) * item.Price
			o.Items = append(o.Items, item)
		}
		o.Total = round(total, 2)
		o.Paid = o.Status != "pending" && o.Status != "cancelled"
		if o.Status == "shipped" || o.Status == "delivered" || o.Status == "refunded" {
			shipped := created.AddDate(0, 0, 1+r.IntN(4))
			s := shipped.Format("2006-01-02")
			o.ShippedAt = &s
			if o.Status != "shipped" {
				d := shipped.AddDate(0, 0, 1+r.IntN(6)).Format("2006-01-02")
				o.DeliveredAt = &d
			}
		}
		o.Shipping.Method = pick(r, methods)
		o.Shipping.Carrier = pick(r, carriers)
		o.Shipping.Address.City = u.Address.City
		o.Shipping.Address.Country = u.Address.Country
		if r.IntN(6) == 0 {
			c := pick(r, coupons)
			o.Coupon = &c
		}
		orders[i] = o
	}
	return orders
}
