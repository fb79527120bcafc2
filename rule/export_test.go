package rule

// BufCap is the capacity of the buffer e keeps for a request's document.
func BufCap(e *Eval) int { return cap(e.buf) }
