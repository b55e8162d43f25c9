package sqltext

import "testing"

func TestQualified(t *testing.T) {
	t.Parallel()
	if got, want := Qualified("j", "id, project_id, run"), "j.id, j.project_id, j.run"; got != want {
		t.Errorf("Qualified = %q, want %q", got, want)
	}
}
