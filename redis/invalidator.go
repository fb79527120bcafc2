package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	goredis "github.com/redis/go-redis/v9"
)

const (
	// idleTimeout is how long the channel may stay silent before Listen
	// pings it, and then how long the pong may take before the channel
	// counts as lost: a dead link is noticed within about twice this.
	idleTimeout = 400 * time.Millisecond

	// The pause between attempts to subscribe again doubles from
	// minBackoff up to maxBackoff.
	minBackoff = 100 * time.Millisecond
	maxBackoff = time.Second

	// maxUnsent bounds the announcements kept for sending once Redis is
	// back.
	maxUnsent = 10000
)

// invalidatorClient is what the invalidator needs of a Redis client.
type invalidatorClient interface {
	Publish(ctx context.Context, channel string, message any) *goredis.IntCmd
	Subscribe(ctx context.Context, channels ...string) *goredis.PubSub
}

// Invalidator carries "mock changed" announcements between replicas over
// Redis publish/subscribe, on the channel prefix+"invalidate". A message is
// "<origin> <mock id>", origin naming the Invalidator that sent it, so that
// a replica does not drop the fresh copy it cached with its own change.
//
// Publish/subscribe delivers only to those subscribed at the time, so Listen
// watches its subscription closely: it pings a silent channel, and reports a
// broken or unanswering one as lost at once, before subscribing again.
// Announcements that could not be sent are kept (up to a bound) and sent by
// Listen once Redis answers again, for the replicas that stayed subscribed.
type Invalidator struct {
	c       invalidatorClient
	channel string
	origin  string

	mu     sync.Mutex
	unsent map[string]uint64 // id -> when it failed, as a sequence number
	seq    uint64
}

// NewInvalidator returns an invalidator on the channel prefix+"invalidate".
func NewInvalidator(c goredis.UniversalClient, prefix string) *Invalidator {
	return &Invalidator{c: c, channel: prefix + "invalidate", origin: rand.Text(), unsent: make(map[string]uint64)}
}

var _ decoy.Invalidator = (*Invalidator)(nil)

// Invalidate announces to every listening replica that mock id changed. It
// returns EUNAVAILABLE when Redis cannot take the announcement; the
// announcement is then sent again by Listen once Redis answers.
func (v *Invalidator) Invalidate(ctx context.Context, id string) error {
	if err := v.c.Publish(ctx, v.channel, v.origin+" "+id).Err(); err != nil {
		v.mu.Lock()
		if _, ok := v.unsent[id]; ok || len(v.unsent) < maxUnsent {
			v.seq++
			v.unsent[id] = v.seq
		}
		v.mu.Unlock()
		return unavailable("announce change of mock "+id, err)
	}
	return nil
}

// Listen delivers announcements to h until ctx ends. It calls h.Listening
// once Redis confirms the subscription, h.Invalidated for each announcement,
// and h.Lost once when the subscription breaks or stops answering; it then
// subscribes again, with backoff, and calls h.Listening when it succeeds.
func (v *Invalidator) Listen(ctx context.Context, h decoy.InvalidationHandler) {
	backoff := minBackoff
	for ctx.Err() == nil {
		listened, err := v.listen(ctx, h)
		if ctx.Err() != nil {
			return
		}
		if listened {
			h.Lost(err)
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// listen subscribes once and delivers announcements until the subscription
// fails. It reports whether it got as far as calling h.Listening.
func (v *Invalidator) listen(ctx context.Context, h decoy.InvalidationHandler) (bool, error) {
	ps := v.c.Subscribe(ctx, v.channel)
	defer ps.Close()
	// Closing the subscription is what interrupts a pending receive when
	// ctx ends; ReceiveTimeout alone would wait out its timeout.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	defer stop()

	// Nothing sent before the confirmation is sure to reach us.
	for {
		msg, err := ps.ReceiveTimeout(ctx, idleTimeout)
		if err != nil {
			return false, err
		}
		if s, ok := msg.(*goredis.Subscription); ok && s.Kind == "subscribe" && s.Channel == v.channel {
			break
		}
	}
	h.Listening()
	v.sendUnsent(ctx)

	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, idleTimeout)
		if err != nil {
			var nerr interface{ Timeout() bool }
			if !pinged && errors.As(err, &nerr) && nerr.Timeout() {
				// Silence may be a dead link that TCP has yet to notice:
				// ask for a pong.
				if err := ps.Ping(ctx); err != nil {
					return true, err
				}
				pinged = true
				v.sendUnsent(ctx)
				continue
			}
			if pinged {
				return true, fmt.Errorf("redis: no answer to ping on the invalidation channel: %w", err)
			}
			return true, err
		}
		pinged = false
		if v.hasUnsent() { // a busy channel never goes idle
			v.sendUnsent(ctx)
		}
		switch m := msg.(type) {
		case *goredis.Message:
			origin, id, ok := strings.Cut(m.Payload, " ")
			if !ok {
				id = m.Payload // from something else than an Invalidator
			}
			if origin != v.origin {
				h.Invalidated(id)
			}
		case *goredis.Subscription:
			if m.Kind == "unsubscribe" {
				return true, errors.New("redis: unsubscribed from the invalidation channel")
			}
		}
	}
}

// hasUnsent reports whether announcements wait to be sent again.
func (v *Invalidator) hasUnsent() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.unsent) > 0
}

// sendUnsent publishes the announcements that could not be sent before.
// What fails again stays for the next try.
func (v *Invalidator) sendUnsent(ctx context.Context) {
	v.mu.Lock()
	unsent := maps.Clone(v.unsent)
	v.mu.Unlock()
	for id, seq := range unsent {
		if err := v.c.Publish(ctx, v.channel, v.origin+" "+id).Err(); err != nil {
			return
		}
		v.mu.Lock()
		// Unless it failed again meanwhile: that later change may be newer
		// than what the other replicas just heard.
		if v.unsent[id] == seq {
			delete(v.unsent, id)
		}
		v.mu.Unlock()
	}
}
