package docs

import (
	"os"
	"reflect"
	"testing"
	"testing/fstest"
)

func TestOperation(t *testing.T) {
	t.Parallel()
	kettle := mustLoad(t, os.DirFS("testdata/kettle"))
	legacy := mustLoad(t, os.DirFS("testdata/legacy"))
	kettleFields := []Field{
		{Name: "id", Type: "string", Description: "Unique id.", Required: true},
		{Name: "name", Type: "string", Description: "Name you gave the kettle."},
		{Name: "tags", Type: "array of string"},
	}
	brewFields := []Field{
		{Name: "celsius", Type: "integer", Description: "Target temperature.", Required: true},
		{Name: "minutes", Type: "integer", Description: "Steeping time."},
	}
	tests := []struct {
		name string
		site *Site
		page *Page
		want *Operation
	}{
		{
			name: "spec from docs.json api.openapi",
			site: kettle,
			page: kettle.Pages["api/list-kettles"],
			want: &Operation{
				Spec: "api/kettle.yaml", Method: "GET", Path: "/kettles", OperationID: "listKettles",
				Summary: "List kettles", Description: "Returns the kettles of your account.", Tags: []string{"Kettles"},
				Parameters: []Parameter{{Name: "limit", In: "query", Description: "How many kettles to return.", Type: "integer"}},
				Responses:  []Response{{Status: "200", Description: "The kettles.", Fields: kettleFields}},
			},
		},
		{
			name: "spec in front matter, other parameter name, path item parameters",
			site: kettle,
			page: kettle.Pages["api/get-kettle"],
			want: &Operation{
				Spec: "api/kettle.yaml", Method: "GET", Path: "/kettles/{kettleId}",
				Summary: "Get a kettle", Description: "Returns one kettle.",
				Parameters: []Parameter{
					{Name: "kettleId", In: "path", Description: "The kettle's id.", Type: "string", Required: true},
					{Name: "X-Trace", In: "header", Description: "Trace id to log."},
				},
				Responses: []Response{
					{Status: "200", Description: "The kettle.", Fields: kettleFields},
					{Status: "404", Description: "No such kettle."},
				},
			},
		},
		{
			name: "request body with allOf",
			site: kettle,
			page: &Page{Path: "api/register", OpenAPI: "POST /kettles"},
			want: &Operation{
				Spec: "api/kettle.yaml", Method: "POST", Path: "/kettles", Summary: "Register a kettle",
				RequestBody: &Body{
					Description: "The kettle to register.", Required: true, ContentTypes: []string{"application/json"},
					Fields: append(append([]Field(nil), kettleFields...), Field{Name: "serial", Type: "string", Description: "Serial number on the base.", Required: true}),
				},
				Responses: []Response{{Status: "201", Description: "Registered."}},
			},
		},
		{
			name: "webhook in a JSON 3.1 spec",
			site: kettle,
			page: kettle.Pages["api/kettle-boiled"],
			want: &Operation{
				Spec: "api/events.json", Method: "WEBHOOK", Path: "kettleBoiled",
				Summary: "Kettle boiled", Description: "Sent when the water reaches the set temperature.",
				RequestBody: &Body{ContentTypes: []string{"application/json"}, Fields: []Field{
					{Name: "celsius", Type: "number", Description: "Temperature reached."},
					{Name: "kettleId", Type: "string", Description: "Which kettle."},
				}},
				Responses: []Response{{Status: "200", Description: "Acknowledge the event."}},
			},
		},
		{
			name: "mint.json openapi, Swagger 2, lower-case method",
			site: legacy,
			page: legacy.Pages["api/ping"],
			want: &Operation{
				Spec: "openapi.json", Method: "GET", Path: "/ping", Summary: "Ping the kettle",
				Responses: []Response{{Status: "200", Description: "It answered."}},
			},
		},
		{
			name: "Swagger 2 body parameter",
			site: legacy,
			page: legacy.Pages["api/brew"],
			want: &Operation{
				Spec: "openapi.json", Method: "POST", Path: "/brew", Summary: "Start brewing",
				Parameters:  []Parameter{{Name: "dryRun", In: "query", Description: "Only check the settings.", Type: "boolean"}},
				RequestBody: &Body{Description: "What to brew.", Required: true, ContentTypes: []string{"application/json"}, Fields: brewFields},
				Responses:   []Response{{Status: "202", Description: "Brewing started.", Fields: brewFields}},
			},
		},
		{name: "not an API page", site: kettle, page: kettle.Pages["quickstart"]},
		{name: "nil page", site: kettle},
		{name: "unknown path", site: kettle, page: &Page{Path: "x", OpenAPI: "GET /teapots"}},
		{name: "unknown method", site: kettle, page: &Page{Path: "x", OpenAPI: "DELETE /kettles"}},
		{name: "missing spec", site: kettle, page: &Page{Path: "x", OpenAPI: "nope.json GET /kettles"}},
		{name: "spec on the web", site: kettle, page: &Page{Path: "x", OpenAPI: "https://example.com/o.json GET /kettles"}},
		{name: "not an operation", site: kettle, page: &Page{Path: "x", OpenAPI: "kettles"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := tc.site.Operation(tc.page)
			if ok != (tc.want != nil) {
				t.Fatalf("Operation ok = %v, want %v (%+v)", ok, tc.want != nil, got)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Operation =\n%+v\nwant\n%+v", got, tc.want)
				if got != nil && tc.want != nil {
					t.Errorf("body %+v, want %+v", got.RequestBody, tc.want.RequestBody)
				}
			}
		})
	}
}

func TestOperationFromNavigation(t *testing.T) {
	t.Parallel()
	// A spec set on a navigation group applies to the pages under it.
	m := fstest.MapFS{
		"docs.json": {Data: []byte(`{"navigation": {"groups": [{"group": "API", "openapi": "/specs/a.yaml", "pages": ["ping"]}]}}`)},
		"ping.mdx":  {Data: []byte("---\ntitle: Ping\nopenapi: GET /ping\n---\n")},
		"specs/a.yaml": {Data: []byte(`openapi: 3.0.0
paths:
  /ping:
    get:
      summary: Ping
      responses:
        "204": {description: Nothing to say.}
`)},
	}
	s := mustLoad(t, m)
	op, ok := s.Operation(s.Pages["ping"])
	if !ok || op.Spec != "specs/a.yaml" || op.Summary != "Ping" || len(op.Responses) != 1 || op.Responses[0].Status != "204" {
		t.Fatalf("Operation = %+v, %v", op, ok)
	}
	if want := []string{"specs/a.yaml"}; !reflect.DeepEqual(s.OpenAPISpecs, want) {
		t.Errorf("OpenAPISpecs = %v, want %v", s.OpenAPISpecs, want)
	}
}

func TestTemplateKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/users/{id}":       "/users/{}",
		"/users/{userId}/":  "/users/{}",
		"/a/{b}/c/{d}":      "/a/{}/c/{}",
		"/odd/{{nested}}/x": "/odd/{}/x",
		"/unclosed/{x":      "/unclosed/{}",
		"/stray}/close":     "/stray}/close",
		"":                  "",
	} {
		if got := templateKey(in); got != want {
			t.Errorf("templateKey(%q) = %q, want %q", in, got, want)
		}
	}
}
