/*
 * One intrusive list: circular and doubly linked, its links inside the
 * structs it lists (Linux's list_head). The block layer's requests and
 * elevator queues, its bios in a plug, a request or the end_io queue, the
 * devices' waiting, in-service and completed requests: each a struct
 * rt_link of its own as the head, one rt_link member in each listed struct.
 *
 *	struct rt_link q_fifo;                  the head: rt_list_init(&q_fifo)
 *	struct req { ...; struct rt_link r_link; };
 *	rt_list_add_tail(&q_fifo, &r->r_link);
 *	struct req *r;
 *	RT_LIST_FOR_EACH(r, &q_fifo, struct req, r_link) ...
 *	r = RT_LIST_FIRST(&q_fifo, struct req, r_link);   NULL when empty
 *	r = RT_LIST_POP(&q_fifo, struct req, r_link);     the same, taken off
 *
 * A head is empty when it points at itself. rt_list_del leaves the link
 * pointing at itself, so a link that was deleted (or initialised) reads as
 * "on no list" with rt_list_empty; a link in a zeroed struct that was
 * never added is on no list either, but is not self-linked (the adds do not
 * need that). Nothing here locks: the lists are under their owners' locks.
 */
#ifndef UJBD_PRIV_LIST_H
#define UJBD_PRIV_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct rt_link {
	struct rt_link *next, *prev;
};

/* The struct of type TYPE whose member MEMBER is the link l. */
#define RT_LIST_ENTRY(l, type, member) ((type *)(void *)((char *)(l) - offsetof(type, member)))

static inline void rt_list_init(struct rt_link *h)
{
	h->next = h->prev = h;
}

static inline bool rt_list_empty(const struct rt_link *h)
{
	return h->next == h;
}

/* Insert n before pos (at the tail when pos is the head). */
static inline void rt_list_insert_before(struct rt_link *pos, struct rt_link *n)
{
	n->prev = pos->prev;
	n->next = pos;
	pos->prev->next = n;
	pos->prev = n;
}

static inline void rt_list_add_tail(struct rt_link *h, struct rt_link *n)
{
	rt_list_insert_before(h, n);
}

static inline void rt_list_add_head(struct rt_link *h, struct rt_link *n)
{
	rt_list_insert_before(h->next, n);
}

/* Take n off its list; n then points at itself. */
static inline void rt_list_del(struct rt_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

/* Take the first link off h and return it, or NULL when h is empty. */
static inline struct rt_link *rt_list_pop(struct rt_link *h)
{
	struct rt_link *n = h->next;

	if (n == h)
		return NULL;
	rt_list_del(n);
	return n;
}

/* rt_list_pop, as the struct whose link is at offset off (RT_LIST_POP). */
static inline void *rt_list_pop_at(struct rt_link *h, size_t off)
{
	struct rt_link *l = rt_list_pop(h);

	return l ? (char *)l - off : NULL;
}

/* Move every link of from, in order, to the tail of h; from is left empty. */
static inline void rt_list_splice_tail(struct rt_link *h, struct rt_link *from)
{
	if (rt_list_empty(from))
		return;
	from->next->prev = h->prev;
	h->prev->next = from->next;
	from->prev->next = h;
	h->prev = from->prev;
	rt_list_init(from);
}

/* The first (last) entry of h, or NULL when h is empty. */
#define RT_LIST_FIRST(h, type, member) \
	(rt_list_empty(h) ? NULL : RT_LIST_ENTRY((h)->next, type, member))
#define RT_LIST_LAST(h, type, member) \
	(rt_list_empty(h) ? NULL : RT_LIST_ENTRY((h)->prev, type, member))
/* The first entry of h taken off it, or NULL when h is empty. */
#define RT_LIST_POP(h, type, member) ((type *)rt_list_pop_at(h, offsetof(type, member)))
/* The entry after (before) p on h, or NULL at the end. */
#define RT_LIST_NEXT(h, p, type, member) \
	((p)->member.next == (h) ? NULL : RT_LIST_ENTRY((p)->member.next, type, member))
#define RT_LIST_PREV(h, p, type, member) \
	((p)->member.prev == (h) ? NULL : RT_LIST_ENTRY((p)->member.prev, type, member))

/* p over every entry of h, first to last (backwards: last to first). The
 * body may not take p off h; RT_LIST_FOR_EACH_SAFE's may (n is the next). */
#define RT_LIST_FOR_EACH(p, h, type, member) \
	for ((p) = RT_LIST_FIRST(h, type, member); (p); (p) = RT_LIST_NEXT(h, p, type, member))
#define RT_LIST_FOR_EACH_BACK(p, h, type, member) \
	for ((p) = RT_LIST_LAST(h, type, member); (p); (p) = RT_LIST_PREV(h, p, type, member))
#define RT_LIST_FOR_EACH_SAFE(p, n, h, type, member)                                   \
	for ((p) = RT_LIST_FIRST(h, type, member),                                      \
	    (n) = (p) ? RT_LIST_NEXT(h, p, type, member) : NULL;                        \
	     (p); (p) = (n), (n) = (p) ? RT_LIST_NEXT(h, p, type, member) : NULL)

#endif /* UJBD_PRIV_LIST_H */
