package engine

import (
	"fmt"
	"strings"
	"testing"
)

func TestIndexTokensJoinsPieces(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"open the team-space page", "open the teamspace team space page"},
		{"run with --dry-run first", "run with dryrun dry run first"},
		{"set DRY_RUN=1", "set DRYRUN DRY RUN 1"},
		{"GET api/v1/users now", "GET apiv1users api v1 users now"},
		{"read user.profile.name", "read userprofilename user profile name"},
		{"the myApp-config file", "the myAppconfig myApp my App config file"},
		// Versions and dates are not names: a piece needs a letter.
		{"since v1.2.3 and 2024-01-05", "since v1 2 3 and 2024 01 05"},
		// A path of many pieces is not joined.
		{"see a/b/c/d/e", "see a b c d e"},
		// Two joiners, or a space, break the run.
		{"a -- b, x. Y", "a b x Y"},
		{"naïve-café text", "naïve café text"},
		{"plain words only", "plain words only"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var got []string
			indexTokens(tt.in, func(raw string) { got = append(got, raw) })
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("indexTokens(%q) = %q, want %q", tt.in, g, tt.want)
			}
		})
	}
}

func TestIndexTokensLongRun(t *testing.T) {
	t.Parallel()
	// More camel parts than a run can hold: the tokens all come, in order,
	// and nothing is joined.
	in := "aaBbCcDdEe-ffGgHhIi-jjKk"
	var got []string
	indexTokens(in, func(raw string) { got = append(got, raw) })
	var want []string
	analyzedTokens(in, func(raw string) { want = append(want, raw) })
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("indexTokens(%q) = %q, want %q", in, got, want)
	}
}

// lanternDocs is a tiny docs site about a made-up photo archive, Lantern,
// whose pages write names in the several ways docs do: run together, with
// a hyphen, in camel case, as two words.
func lanternDocs() []Chunk {
	page := func(path, title, text string) Chunk {
		return Chunk{ID: path, PagePath: path, URL: "https://docs.example/" + path, PageTitle: title,
			Breadcrumb: []string{title}, Text: text}
	}
	return []Chunk{
		page("albums/photoshelf", "Grouping pictures", "Create a photoshelf to group the pictures of one trip."),
		page("viewer/dark", "Viewer colours", "Switch the viewer to night mode from its menu."),
		page("import/preview", "Previewing an import", "Start the importer with --dry-run to list what would change."),
		page("import/options", "Importer options", "The cacheDir option moves the thumbnails elsewhere."),
		page("api/albums", "Albums endpoint", "GET api/v2/albums returns every album of the archive."),
		page("print/paper", "Printing", "Each photo prints on the paper you load. A shelf of paper lasts a month."),
		page("print/night", "Print queue", "Jobs sent at night wait in the queue. The queue mode is set per printer."),
		page("print/dry", "Ink care", "Let the ink dry before you stack prints. Run a cleaning cycle weekly."),
		page("storage/cache", "Storage", "Thumbnails live in the cache. Each directory holds one album; the dir name is the album id."),
		page("archive/shelf", "Archive layout", "An album sits on a shelf of the archive, next to its photo list."),
		page("viewer/modes", "Viewer modes", "The viewer has a slideshow mode and a grid mode; at night it dims."),
		page("import/run", "Running an import", "Run the importer from the toolbar. A run reads every file once."),
	}
}

func TestCompoundsMeetTheirParts(t *testing.T) {
	t.Parallel()
	di := Build(lanternDocs(), 1)
	tests := []struct{ query, want string }{
		// Written run together, asked as two words or with a hyphen.
		{"photo shelf for a trip", "albums/photoshelf"},
		{"how do I make a photo-shelf?", "albums/photoshelf"},
		// Written as two words, asked run together.
		{"turn on nightmode", "viewer/dark"},
		// An option written with a hyphen, asked in other spellings.
		{"dryRun importer", "import/preview"},
		{"importer dry run", "import/preview"},
		{"DRY_RUN import", "import/preview"},
		{"importer dryrun", "import/preview"},
		// Written in camel case, asked with an underscore or as words.
		{"cache_dir option", "import/options"},
		{"cache dir option", "import/options"},
		// A path, asked run together or as its pieces.
		{"api/v2/albums", "api/albums"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			hits := di.Search(Query{Terms: ParseQuery(tt.query+"?", "en"), Limit: 3, MaxPerPage: 1})
			if len(hits) == 0 || hits[0].PagePath != tt.want {
				t.Errorf("%q: first hit %v, want %s", tt.query, scoredPaths(hits), tt.want)
			}
		})
	}
}

func scoredPaths(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s %.3f", h.PagePath, h.Score))
	}
	return out
}
