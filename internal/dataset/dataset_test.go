package dataset_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/decoy-mock/decoy/internal/dataset"
)

func TestUsers(t *testing.T) {
	doc := dataset.Users(500)
	var users []struct {
		ID      int
		Status  string
		Address struct {
			City string
			Geo  struct{ Lat, Lng float64 }
		}
		CreatedAt string
	}
	if err := json.Unmarshal(doc, &users); err != nil {
		t.Fatal(err)
	}
	if len(users) != 500 || users[499].ID != 500 || users[0].Address.City == "" || len(users[7].CreatedAt) != 10 {
		t.Errorf("unexpected users: %d, %+v", len(users), users[0])
	}
	if !bytes.Equal(doc, dataset.Users(500)) {
		t.Error("not deterministic")
	}
}
