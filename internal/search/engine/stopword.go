package engine

// StopWord reports whether w, a word as written (any case), is a function
// word of English or of lang (see DetectLanguage): the words ParseQuery
// leaves out of a query. Callers that weigh a question's words against the
// index use it so that they drop the same words the search drops.
func StopWord(lang, w string) bool {
	w = fold(w)
	return stopEN(w) || lang != "en" && stopWord(lang, w)
}
