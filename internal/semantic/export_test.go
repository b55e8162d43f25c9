package semantic

import "time"

// Tests retry after milliseconds, not the quarter second a provider gets.
func (e *OpenAIEmbedder) SetRetryBaseForTest(base time.Duration) { e.post.retryBase = base }

func (r *HTTPReranker) SetRetryBaseForTest(base time.Duration) { r.post.retryBase = base }

const MaxAttemptsForTest = defaultMaxAttempts

func (e *OpenAIEmbedder) SetAttemptLimitForTest(d time.Duration) { e.post.attemptLimit = d }
