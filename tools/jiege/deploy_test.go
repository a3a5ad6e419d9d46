package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The batch files run deploy/shard.sh, which turns each system's task
// index into compare --shard K/N; a fake jiege records its arguments.
func TestDeployShardScript(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "jiege")
	os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" > "+argsFile+"\nexit ${FAKE_STATUS:-0}\n"), 0o755)
	base := []string{"PATH=" + os.Getenv("PATH"), "JIEGE=" + fake, "MANIFEST=/a/m.json", "OUT=/r"}
	for _, c := range []struct {
		name     string
		env      []string
		wantArgs string
		wantOK   bool
	}{
		{"kubernetes", []string{"JOB_COMPLETION_INDEX=2", "SHARDS=4"}, "compare /a/m.json --shard 2/4 --out /r", true},
		{"slurm", []string{"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=3"}, "compare /a/m.json --shard 1/3 --out /r", true},
		{"slurm array from 1", []string{"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=3", "JIEGE_FLAGS=--runs 5 --no-wrk"},
			"compare /a/m.json --shard 2/3 --out /r --runs 5 --no-wrk", true},
		{"a failed attempt is a verdict", []string{"JOB_COMPLETION_INDEX=0", "SHARDS=1", "FAKE_STATUS=1"}, "compare /a/m.json --shard 0/1 --out /r", true},
		{"an environment error fails the shard", []string{"JOB_COMPLETION_INDEX=0", "SHARDS=1", "FAKE_STATUS=2"}, "compare /a/m.json --shard 0/1 --out /r", false},
		{"no index", nil, "", false},
	} {
		os.Remove(argsFile)
		cmd := exec.Command("sh", "deploy/shard.sh")
		cmd.Env = append(append([]string{}, base...), c.env...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.wantOK {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		}
		got, _ := os.ReadFile(argsFile)
		if strings.TrimSpace(string(got)) != c.wantArgs {
			t.Errorf("%s: jiege %q, want %q", c.name, strings.TrimSpace(string(got)), c.wantArgs)
		}
	}
	// The Kubernetes Job and the Slurm array run it with as many shards as
	// they have tasks.
	k8s, _ := os.ReadFile("deploy/k8s-job.yaml")
	for _, want := range []string{"completionMode: Indexed", "completions: 4", "parallelism: 4", "value: \"4\""} {
		if !strings.Contains(string(k8s), want) {
			t.Errorf("k8s-job.yaml lacks %q", want)
		}
	}
	slurm, _ := os.ReadFile("deploy/slurm-array.sbatch")
	if !strings.Contains(string(slurm), "#SBATCH --array=0-3") || !strings.Contains(string(slurm), "/shard.sh") {
		t.Errorf("slurm-array.sbatch:\n%s", slurm)
	}
	// The array script itself, as Slurm runs it from its spool directory.
	os.Remove(argsFile)
	repo, _ := filepath.Abs("../..")
	cmd := exec.Command("sh", "deploy/slurm-array.sbatch")
	cmd.Env = append(append([]string{}, base...), "SLURM_SUBMIT_DIR="+repo, "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=4")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("slurm-array.sbatch: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(argsFile); strings.TrimSpace(string(got)) != "compare /a/m.json --shard 3/4 --out /r" {
		t.Errorf("slurm-array.sbatch ran jiege %q", got)
	}
	docker, _ := os.ReadFile("deploy/Dockerfile")
	if !strings.Contains(string(docker), "COPY tools/jiege/deploy/shard.sh") {
		t.Errorf("the image lacks shard.sh")
	}
}
