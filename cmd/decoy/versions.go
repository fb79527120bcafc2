package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/decoy-mock/decoy"
)

// runVersions runs the commands of the versions of a mock's data (§9):
// versions ID, version-data ID V and restore ID V.
func (c *mockCommand) runVersions(ctx context.Context, name string, args []string) error {
	want := 2
	if name == "versions" {
		want = 1
	}
	pos, err := c.parse(args, want)
	if err != nil {
		return err
	}
	id, cl := pos[0], c.client()
	if name == "versions" {
		vs, err := cl.Versions(ctx, id)
		if err != nil {
			return err
		}
		return c.print(struct {
			Versions []decoy.Version `json:"versions"`
		}{vs})
	}
	v, err := strconv.ParseInt(pos[1], 10, 64)
	if err != nil || v < 1 {
		c.fs.Usage()
		return fmt.Errorf("%w: the version is a number from 1, as decoy mock versions lists them", errUsage)
	}
	if name == "restore" {
		return c.show(cl.RestoreVersion(ctx, id, v))
	}
	_, data, err := cl.VersionData(ctx, id, v)
	if err != nil {
		return err
	}
	_, err = c.stdout.Write(data)
	return err
}
