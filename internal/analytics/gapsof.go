package analytics

// GapsOf groups turns already read into content gaps, as Gaps does over a
// range, without their jobs: for a reader of a bounded slice of recent
// turns (the checks kept from traffic). turns must be oldest first.
func (s *Service) GapsOf(turns []TurnRecord) []Gap {
	return groupGaps(turns, s.lowScore)
}
