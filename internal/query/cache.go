package query

import (
	"container/list"

	"github.com/neardup/neardup/internal/index"
	"github.com/neardup/neardup/internal/textstore"
)

// sized is what the cache holds: a band table or a decoded frame of a
// text store.
type sized interface{ Bytes() int64 }

// memCache keeps the band tables of the band files read and the text
// stores' frames decoded, up to a budget of bytes, evicting the least
// recently used: queries one document at a time read the same partitions
// again and again, and decode a frame for each match.
type memCache struct {
	budget, used int64
	order        *list.List // of *cached, most recent first
	byName       map[string]*list.Element
}

type cached struct {
	name string
	v    sized
}

func newMemCache(budget int64) *memCache {
	return &memCache{budget: budget, order: list.New(), byName: map[string]*list.Element{}}
}

// get returns what is held under name, if anything.
func (c *memCache) get(name string) (sized, bool) {
	e, ok := c.byName[name]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).v, true
}

// add holds v under name unless it is larger than the budget, evicting
// others to make room.
func (c *memCache) add(name string, v sized) {
	size := v.Bytes()
	if size > c.budget {
		return
	}
	if e, ok := c.byName[name]; ok {
		c.used -= e.Value.(*cached).v.Bytes()
		c.order.Remove(e)
		delete(c.byName, name)
	}
	for c.used+size > c.budget {
		e := c.order.Back()
		old := e.Value.(*cached)
		c.used -= old.v.Bytes()
		delete(c.byName, old.name)
		c.order.Remove(e)
	}
	c.byName[name] = c.order.PushFront(&cached{name: name, v: v})
	c.used += size
}

// table returns the band table held under name, if any.
func (c *memCache) table(name string) (*index.BandTable, bool) {
	v, ok := c.get(name)
	t, isTable := v.(*index.BandTable)
	return t, ok && isTable
}

// frames is the cache as a text store reader's textstore.FrameCache.
type frames struct{ c *memCache }

func (f frames) Frame(key string) (*textstore.Frame, bool) {
	v, ok := f.c.get(key)
	fr, isFrame := v.(*textstore.Frame)
	return fr, ok && isFrame
}

func (f frames) AddFrame(key string, fr *textstore.Frame) { f.c.add(key, fr) }
