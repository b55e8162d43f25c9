package gitcli

import "testing"

// FuzzParseRawDiff: git's raw diff output, however mangled, is parsed or
// refused, never a panic, and every change parsed has a path and, unless
// deleted, a blob id.
func FuzzParseRawDiff(f *testing.F) {
	f.Add([]byte(":100644 100644 7898192261 422c2b7ab3 M\x00a.mdx\x00"))
	f.Add([]byte(":100644 000000 7898192261322c2b7ab3b3c668038da977e4e93a5f 0000000000000000000000000000000000000000 D\x00docs/old.mdx\x00"))
	f.Add([]byte(":000000 100644 0000000000000000000000000000000000000000 422c2b7ab3b3c668038da977e4e93a5fc623169c A\x00docs/new.mdx\x00"))
	f.Add([]byte(":100644\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		changes, err := parseRawDiff(out)
		if err != nil {
			return
		}
		for _, c := range changes {
			if c.Path == "" || (c.Blob != "" && !IsCommitID(c.Blob)) {
				t.Fatalf("change %+v from %q", c, out)
			}
		}
	})
}
