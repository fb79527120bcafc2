package server

// FastAnswers is how many reads the guard answered itself (see fast.go).
func FastAnswers(s *Server) int64 { return s.fastAnswers.Load() }
