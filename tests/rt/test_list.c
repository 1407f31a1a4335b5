/*
 * The intrusive list (priv/list.h): adds at both ends and before a link,
 * deletion, pop, splice, and the iterations forwards, backwards and while
 * deleting.
 */
#include "t.h"
#include "priv/list.h"

struct item {
	int v;
	struct rt_link link;
};

/* The values of h in order, as digits, into buf. */
static const char *values(const struct rt_link *h, char *buf)
{
	const struct item *it;
	size_t n = 0;

	RT_LIST_FOR_EACH(it, h, const struct item, link)
		buf[n++] = (char)('0' + it->v);
	buf[n] = '\0';
	return buf;
}

static void t_add_del(void)
{
	struct item it[5];
	struct rt_link h;
	char buf[16];

	rt_list_init(&h);
	T_CHECK(rt_list_empty(&h));
	T_CHECK(RT_LIST_FIRST(&h, struct item, link) == NULL);
	T_CHECK(RT_LIST_LAST(&h, struct item, link) == NULL);
	T_CHECK(rt_list_pop(&h) == NULL);
	for (int i = 0; i < 5; i++)
		it[i].v = i;
	rt_list_add_tail(&h, &it[1].link);
	rt_list_add_tail(&h, &it[3].link);
	rt_list_add_head(&h, &it[0].link);
	rt_list_insert_before(&it[3].link, &it[2].link);
	rt_list_insert_before(&h, &it[4].link); /* the tail */
	T_STREQ(values(&h, buf), "01234");
	T_CHECK(RT_LIST_FIRST(&h, struct item, link) == &it[0]);
	T_CHECK(RT_LIST_LAST(&h, struct item, link) == &it[4]);
	T_CHECK(RT_LIST_NEXT(&h, &it[4], struct item, link) == NULL);
	T_CHECK(RT_LIST_PREV(&h, &it[0], struct item, link) == NULL);
	T_CHECK(RT_LIST_NEXT(&h, &it[1], struct item, link) == &it[2]);
	rt_list_del(&it[2].link);
	T_CHECK(rt_list_empty(&it[2].link)); /* deleted: on no list */
	T_STREQ(values(&h, buf), "0134");
	T_CHECK(RT_LIST_POP(&h, struct item, link) == &it[0]);
	T_STREQ(values(&h, buf), "134");

	struct item *p, *n;
	size_t k = 0;
	RT_LIST_FOR_EACH_BACK(p, &h, struct item, link)
		buf[k++] = (char)('0' + p->v);
	buf[k] = '\0';
	T_STREQ(buf, "431");
	RT_LIST_FOR_EACH_SAFE(p, n, &h, struct item, link)
		if (p->v != 3)
			rt_list_del(&p->link);
	T_STREQ(values(&h, buf), "3");
	rt_list_del(&it[3].link);
	T_CHECK(rt_list_empty(&h));
}

static void t_splice(void)
{
	struct item it[4];
	struct rt_link a, b;
	char buf[16];

	rt_list_init(&a);
	rt_list_init(&b);
	for (int i = 0; i < 4; i++) {
		it[i].v = i;
		rt_list_add_tail(i < 2 ? &a : &b, &it[i].link);
	}
	rt_list_splice_tail(&a, &b);
	T_STREQ(values(&a, buf), "0123");
	T_CHECK(rt_list_empty(&b));
	rt_list_splice_tail(&a, &b); /* an empty one: nothing moves */
	T_STREQ(values(&a, buf), "0123");
	rt_list_splice_tail(&b, &a); /* into an empty one */
	T_STREQ(values(&b, buf), "0123");
	T_CHECK(rt_list_empty(&a));
	T_CHECK(RT_LIST_LAST(&b, struct item, link) == &it[3]);
	T_CHECK(it[3].link.next == &b && b.prev == &it[3].link);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_add_del);
	T_RUN(t_splice);
	return t_done(argv[0]);
}
