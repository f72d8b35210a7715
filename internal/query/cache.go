package query

import (
	"container/list"

	"github.com/neardup/neardup/internal/index"
)

// tableCache keeps the band tables of the band files read, up to a
// budget of bytes, evicting the least recently used: queries one document
// at a time read the same partitions again and again.
type tableCache struct {
	budget, used int64
	order        *list.List // of *cached, most recent first
	byName       map[string]*list.Element
}

type cached struct {
	name string
	t    *index.BandTable
}

func newTableCache(budget int64) *tableCache {
	return &tableCache{budget: budget, order: list.New(), byName: map[string]*list.Element{}}
}

// get returns the table of a file, if held.
func (c *tableCache) get(name string) (*index.BandTable, bool) {
	e, ok := c.byName[name]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).t, true
}

// add holds the table of a file unless it is larger than the budget,
// evicting others to make room.
func (c *tableCache) add(name string, t *index.BandTable) {
	size := t.Bytes()
	if size > c.budget {
		return
	}
	for c.used+size > c.budget {
		e := c.order.Back()
		old := e.Value.(*cached)
		c.used -= old.t.Bytes()
		delete(c.byName, old.name)
		c.order.Remove(e)
	}
	c.byName[name] = c.order.PushFront(&cached{name: name, t: t})
	c.used += size
}
