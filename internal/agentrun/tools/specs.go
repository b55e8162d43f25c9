package tools

import "fmt"

// toolTable is the list of tools the model sees, in the order Specs returns them.
func (w *Workspace) toolTable() []*tool {
	l := w.limits
	pathParam := func(desc string) param {
		return param{name: "path", typ: typeString, required: true, example: "guides/quickstart.mdx",
			desc: desc + " Relative to the docs root, with forward slashes and the file extension, e.g. \"guides/quickstart.mdx\"."}
	}
	return []*tool{
		{
			name: "list_files",
			desc: fmt.Sprintf("List the text files under a directory of the docs, recursively, one path per line "+
				"(paths are relative to the docs root). Skips .git, hidden directories, symlinks and binary files such as images. "+
				"Shows at most %d files; narrow with dir or glob.", maxListEntries),
			params: []param{
				{name: "dir", typ: typeString, desc: "Directory to list, relative to the docs root, e.g. \"guides\". Omit for the whole docs root."},
				{name: "glob", typ: typeString, desc: "Only files matching this pattern. Without a \"/\" it matches the file name (\"*.mdx\"); " +
					"with one it matches the path from the docs root, and \"**\" matches any number of directories (\"guides/**/*.mdx\")."},
			},
			run: w.listFiles,
		},
		{
			name: "read_file",
			desc: fmt.Sprintf("Read a text file with line numbers, each line shown as \"  12| text\" (the number and \"| \" are not part of the file). "+
				"Returns at most %d lines per call; use start_line and end_line to read other parts.", l.MaxReadLines),
			params: []param{
				pathParam("File to read."),
				{name: "start_line", typ: typeInteger, desc: "First line to show, 1-based. Default 1."},
				{name: "end_line", typ: typeInteger, desc: "Last line to show, inclusive; -1 for the end of the file. Default: the end of the file."},
			},
			run: w.readFile,
		},
		{
			name: "search",
			desc: fmt.Sprintf("Search the text files of the docs and return matching lines as \"path:line: text\". "+
				"By default query is literal text matched case-insensitively; set regex to use an RE2 regular expression "+
				"(prefix it with (?i) to ignore case). Returns at most %d hits.", l.MaxSearchHits),
			params: []param{
				{name: "query", typ: typeString, required: true, example: "--watch", desc: "Text (or, with regex, a regular expression) to find within one line."},
				{name: "regex", typ: typeBoolean, desc: "Treat query as an RE2 regular expression. Default false."},
				{name: "path", typ: typeString, desc: "Only search this file or directory (e.g. \"guides\"), or the files matching this glob (e.g. \"**/*.mdx\"). Omit for all files."},
			},
			run: w.search,
		},
		{
			name: "str_replace",
			desc: "Replace text in a file. old_str must match the file exactly, including whitespace and line breaks, and exactly once " +
				"unless replace_all is true; include a few surrounding lines to make it unique. Do not include the line-number prefixes shown by read_file. " +
				"Returns the edited lines.",
			params: []param{
				pathParam("File to edit."),
				{name: "old_str", typ: typeString, required: true, example: "old text", desc: "The exact text to replace."},
				{name: "new_str", typ: typeString, required: true, example: "new text", desc: "The text to put in its place; \"\" deletes old_str."},
				{name: "replace_all", typ: typeBoolean, desc: "Replace every occurrence of old_str instead of requiring exactly one. Default false."},
			},
			run: w.strReplace,
		},
		{
			name: "insert",
			desc: "Insert text as new lines after a given line of a file (0 inserts at the top). Returns the edited lines.",
			params: []param{
				pathParam("File to edit."),
				{name: "insert_line", typ: typeInteger, required: true, example: 0, desc: "Insert after this line number (as shown by read_file); 0 = at the top of the file."},
				{name: "text", typ: typeString, required: true, example: "New paragraph.\n", desc: "The lines to insert. A final line break is added if missing."},
			},
			run: w.insert,
		},
		{
			name: "create_file",
			desc: "Create a new file with the given content; missing parent directories are created. Fails if the file already exists " +
				"(edit it with str_replace or insert instead). A new page usually also needs an entry in the navigation of docs.json.",
			params: []param{
				pathParam("File to create."),
				{name: "content", typ: typeString, required: true, example: "---\ntitle: Quickstart\n---\n\nText.\n", desc: "The whole content of the new file."},
			},
			run: w.createFile,
		},
		{
			name: "delete_file",
			desc: "Delete a file. The result lists the pages and navigation entries that still refer to it, which you should then update.",
			params: []param{
				pathParam("File to delete."),
			},
			run: w.deleteFile,
		},
		{
			name: "move_file",
			desc: "Move or rename a file, and update the references to it: navigation entries in docs.json or mint.json " +
				"(\"guides/old\" becomes \"guides/new\") and links in pages (\"](/guides/old)\", \"](/guides/old#section)\", href=\"/guides/old\"). " +
				"Fails if the destination exists. Returns the files it updated.",
			params: []param{
				{name: "from", typ: typeString, required: true, example: "guides/old.mdx", desc: "Current path of the file, relative to the docs root, with its extension."},
				{name: "to", typ: typeString, required: true, example: "guides/new.mdx", desc: "New path of the file, relative to the docs root, with its extension."},
			},
			run: w.moveFile,
		},
	}
}
