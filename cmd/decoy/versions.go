package main

import (
	"strconv"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/spf13/cobra"
)

// The commands of the versions of a mock's data (§9): versions ID,
// version-data ID V and restore ID V.

func mockVersionsCommand() *cobra.Command {
	return mockIDCommand("versions", "List the kept versions of a mock's data, newest first",
		"List the kept versions of a mock's data, newest first; the current data is first.",
		"  decoy mock versions ID", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			vs, err := cl.Versions(cmd.Context(), id)
			if err != nil {
				return err
			}
			return o.list(struct {
				Versions []decoy.Version `json:"versions"`
			}{vs}, "versions", versionColumns, "No versions.")
		})
}

// versionCmd is a command of one version of a mock: ID V.
func versionCmd(use, short, long, example string, out bool, run func(cmd *cobra.Command, cl *client.Client, o *output, id string, v int64) error) *cobra.Command {
	cmd := &cobra.Command{Use: use + " ID VERSION", Short: short, Long: long, Example: example, Args: exactArgs(2, "a mock (id or name) and a version")}
	a := addAPIFlags(cmd, out)
	cmd.ValidArgsFunction = a.completeMockIDs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || v < 1 {
			return usagef("the version is a number from 1, as decoy mock versions lists them")
		}
		cl, o, err := a.prepare(cmd)
		if err != nil {
			return err
		}
		id, err := (handles{cl}).mock(cmd.Context(), args[0], "")
		if err != nil {
			return err
		}
		return run(cmd, cl, o, id, v)
	}
	return cmd
}

func mockVersionDataCommand() *cobra.Command {
	return versionCmd("version-data", "Print a version of a mock's data, as it was stored", "",
		"  decoy mock version-data ID 3 > users-v3.json", false,
		func(cmd *cobra.Command, cl *client.Client, _ *output, id string, v int64) error {
			_, data, err := cl.VersionData(cmd.Context(), id, v)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		})
}

func mockRestoreCommand() *cobra.Command {
	return versionCmd("restore", "Make a version the mock's data again",
		"Make version VERSION the mock's data again. The restore is a new version: the data\nit replaces is kept too.",
		"  decoy mock restore ID 3", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string, v int64) error {
			m, err := cl.RestoreVersion(cmd.Context(), id, v)
			if err != nil {
				return err
			}
			return o.object(m)
		})
}

func mockResetCommand() *cobra.Command {
	return mockIDCommand("reset", "Drop the writes made through a mock's routes",
		"Set a mock's live data back to its current version: the records created, changed\nand deleted through its routes since are dropped (on every replica).",
		"  decoy mock reset ID", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			m, err := cl.ResetLive(cmd.Context(), id)
			if err != nil {
				return err
			}
			return o.object(m)
		})
}

func mockSnapshotCommand() *cobra.Command {
	return mockIDCommand("snapshot", "Save a mock's live data as a new version",
		"Save a mock's live data, with the writes made through its routes, as a new version:\nthe current one, which a reset then goes back to.",
		"  decoy mock snapshot ID", true,
		func(cmd *cobra.Command, cl *client.Client, o *output, id string) error {
			v, err := cl.Snapshot(cmd.Context(), id)
			if err != nil {
				return err
			}
			return o.list(struct {
				Versions []decoy.Version `json:"versions"`
			}{[]decoy.Version{*v}}, "versions", versionColumns, "")
		})
}
