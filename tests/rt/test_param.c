/*
 * Parameter tables (param.h): defaults from the rows, parsing in the row's
 * unit with ranges, all-or-nothing lists, and the printed forms.
 */
#include <errno.h>
#include <stdbool.h>

#include "t.h"
#include "priv/param.h"

struct demo {
	double seek_ms;
	uint64_t idle_ns;   /* given in ms */
	unsigned depth;
	bool meta;
	int untouched;
	uint32_t sector;    /* a power of two */
	uint32_t inodes;    /* multiples of 32 */
};

static const struct rt_param demo_rows[] = {
	RT_PARAM(struct demo, seek_ms, RT_PARAM_DOUBLE, "ms", 0, 8.5, 0.5, 40, "a data sheet", "seek"),
	RT_PARAM(struct demo, idle_ns, RT_PARAM_U64, "ms", 1e6, 8, 0, 1000, "a kernel", "idle"),
	RT_PARAM(struct demo, depth, RT_PARAM_UINT, "", 0, 32, 1, 256, "", "depth"),
	RT_PARAM(struct demo, meta, RT_PARAM_BOOL, "", 0, 1, 0, 1, "", "meta"),
	RT_PARAM_RULE(struct demo, sector, RT_PARAM_U32, "B", 0, 512, 512, 65536, 0, true, "", "sector"),
	RT_PARAM_RULE(struct demo, inodes, RT_PARAM_U32, "", 0, 16384, 32, 32768, 32, false, "", "inodes"),
};
static const struct rt_param_table demo_table =
	RT_PARAM_TABLE("demo", "a demo model", demo_rows, struct demo);

static void t_defaults(void)
{
	struct demo d = { .untouched = 7 };

	rt_param_defaults(&demo_table, &d);
	T_CHECK(d.seek_ms == 8.5);
	T_EQ_U64(d.idle_ns, 8000000);
	T_EQ(d.depth, 32);
	T_CHECK(d.meta);
	T_EQ(d.untouched, 7);
	T_CHECK(!rt_param_changed(&demo_table, &d));
}

static void t_parse(void)
{
	struct demo d;
	char err[160] = "";

	rt_param_defaults(&demo_table, &d);
	T_EQ(rt_param_parse(&demo_table, &d, "seek_ms=9.5,idle_ns=4,meta=off", err, sizeof(err)), 0);
	T_CHECK(d.seek_ms == 9.5);
	T_EQ_U64(d.idle_ns, 4000000);
	T_CHECK(!d.meta);
	T_CHECK(rt_param_changed(&demo_table, &d));
	T_CHECK(rt_param_get(rt_param_find(&demo_table, "idle_ns"), &d) == 4.0);
	T_EQ(rt_param_parse(&demo_table, &d, "", err, sizeof(err)), 0);
}

/* name*=f scales what is in force (after the list's earlier items too),
 * integers rounded, numbers only, and stays all or nothing. */
static void t_scale(void)
{
	struct demo d, before;
	char err[160] = "";

	rt_param_defaults(&demo_table, &d);
	T_EQ(rt_param_parse(&demo_table, &d, "seek_ms*=1.2,idle_ns=5,idle_ns*=0.8,depth*=1.2",
			    err, sizeof(err)), 0);
	T_CHECK(d.seek_ms > 10.19 && d.seek_ms < 10.21);
	T_EQ_U64(d.idle_ns, 4000000);
	T_EQ(d.depth, 38);                     /* 32 * 1.2 = 38.4, rounded */
	before = d;
	T_EQ(rt_param_parse(&demo_table, &d, "depth*=2,meta*=2", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "meta*: '2'") != NULL);
	T_EQ(rt_param_parse(&demo_table, &d, "seek_ms*=10", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "out of range") != NULL);
	T_EQ(rt_param_parse(&demo_table, &d, "depth*=x", err, sizeof(err)), -EINVAL);
	T_EQ(rt_param_parse(&demo_table, &d, "nosuch*=2", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "unknown parameter") != NULL);
	T_CHECK(!memcmp(&d, &before, sizeof(d)));
}

/* A row's rule beyond its range: refused by name with the rule said; a
 * scaled value goes to the nearest value the rule allows. */
static void t_rules(void)
{
	struct demo d, before;
	char err[160] = "";

	rt_param_defaults(&demo_table, &d);
	T_EQ(rt_param_parse(&demo_table, &d, "sector=4096,inodes=8192", err, sizeof(err)), 0);
	T_EQ(d.sector, 4096);
	before = d;
	T_EQ(rt_param_parse(&demo_table, &d, "sector=614", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "sector: '614': not a power of two (") != NULL);
	T_EQ(rt_param_parse(&demo_table, &d, "inodes=13107", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "inodes: '13107': not a multiple of 32 (") != NULL);
	T_CHECK(!memcmp(&d, &before, sizeof(d)));
	T_EQ(rt_param_parse(&demo_table, &d, "inodes*=1.6,sector*=0.7", err, sizeof(err)), 0);
	T_EQ(d.inodes, 13120);                /* 13107.2 -> the nearest multiple of 32 */
	T_EQ(d.sector, 2048);                 /* 2867.2 -> the nearest power of two */
	T_EQ(rt_param_parse(&demo_table, &d, "sector*=1.2", err, sizeof(err)), 0);
	T_EQ(d.sector, 2048);                 /* 2457.6 rounds back: no move */
}

static void t_errors_change_nothing(void)
{
	struct demo d, before;
	char err[160] = "";

	rt_param_defaults(&demo_table, &d);
	before = d;
	/* the first item is fine, the second out of range: nothing is set */
	T_EQ(rt_param_parse(&demo_table, &d, "depth=4,seek_ms=100", err, sizeof(err)), -EINVAL);
	T_CHECK(!memcmp(&d, &before, sizeof(d)));
	T_CHECK(strstr(err, "seek_ms: '100': out of range (0.5 to 40 ms)"));
	T_EQ(rt_param_parse(&demo_table, &d, "nosuch=1", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "'nosuch': unknown parameter"));
	T_EQ(rt_param_parse(&demo_table, &d, "depth=2.5", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "depth: '2.5': not an integer ("));
	T_EQ(rt_param_parse(&demo_table, &d, "depth", err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "expected name=value"));
	T_EQ(rt_param_parse(&demo_table, &d, "meta=maybe", err, sizeof(err)), -EINVAL);
	T_EQ(rt_param_parse(&demo_table, &d, "seek_ms=nan", err, sizeof(err)), -EINVAL);
	T_EQ(rt_param_put(rt_param_find(&demo_table, "depth"), &d, 0), -EINVAL);
	T_CHECK(!memcmp(&d, &before, sizeof(d)));
}

static void t_print(void)
{
	struct demo d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	T_CHECK(f);
	rt_param_defaults(&demo_table, &d);
	d.depth = 4;
	T_EQ(rt_param_json(f, &demo_table, &d), 0);
	fclose(f);
	T_CHECK(strstr(buf, "\"depth\": {\"value\": 4, \"unit\": \"\", \"default\": 32"));
	T_CHECK(strstr(buf, "\"idle_ns\": {\"value\": 8, \"unit\": \"ms\""));
	T_CHECK(strstr(buf, "\"source\": \"a data sheet\""));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	T_CHECK(f);
	T_EQ(rt_param_print(f, &demo_table, NULL), 0);
	fclose(f);
	T_CHECK(strstr(buf, "[demo] a demo model"));
	T_CHECK(strstr(buf, "seek_ms") && strstr(buf, "0.5..40"));
	free(buf);
}

int main(int argc, char **argv)
{
	(void)argc;
	T_RUN(t_defaults);
	T_RUN(t_parse);
	T_RUN(t_scale);
	T_RUN(t_rules);
	T_RUN(t_errors_change_nothing);
	T_RUN(t_print);
	return t_done(argv[0]);
}
