/*
 * Per-thread I/O priority in the kernel's encoding (class << 13 | level).
 *
 * rt always records the value itself, because the block layer and the sim
 * devices read it back with rt_ioprio_get(); in the real world it is also
 * handed to the kernel with ioprio_set(IOPRIO_WHO_PROCESS, tid) so that bfq
 * and mq-deadline see it. The kernel may refuse (RT needs CAP_SYS_NICE, a
 * seccomp filter may forbid the call): the caller gets the negated errno and
 * carries on with the recorded value.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt/rt_int.h"

#define RT_IOPRIO_WHO_PROCESS 1

/* Foreign threads have no rt_thread to keep the value in. */
static _Thread_local uint16_t rt_foreign_ioprio = RT_IOPRIO_DEFAULT;

static const char *const rt_ioprio_names[] = { "none", "rt", "be", "idle" };

static bool rt_ioprio_valid(uint16_t ioprio)
{
	unsigned cls = RT_IOPRIO_CLASS(ioprio), level = RT_IOPRIO_LEVEL(ioprio);

	if (cls > RT_IOPRIO_CLASS_IDLE || level >= RT_IOPRIO_LEVELS)
		return false;
	if (cls == RT_IOPRIO_CLASS_NONE && level != 0 && level != 4)
		return false;
	return true;
}

/* The kernel takes NONE only with level 0 ("no priority set"). */
static int rt_ioprio_kernel_set(uint16_t ioprio)
{
	unsigned kprio = RT_IOPRIO_CLASS(ioprio) == RT_IOPRIO_CLASS_NONE ? 0 : ioprio;

	if (syscall(SYS_ioprio_set, RT_IOPRIO_WHO_PROCESS, (int)gettid(), kprio) < 0)
		return -errno;
	return 0;
}

int rt_ioprio_set(uint16_t ioprio)
{
	if (!rt_ioprio_valid(ioprio))
		return -EINVAL;
	if (rt_cur)
		rt_cur->t_ioprio = ioprio;
	else
		rt_foreign_ioprio = ioprio;
	if (rt_in_sim())
		return 0;
	return rt_ioprio_kernel_set(ioprio);
}

uint16_t rt_ioprio_get(void)
{
	return rt_cur ? rt_cur->t_ioprio : rt_foreign_ioprio;
}

static int rt_ioprio_class_of(const char *s, size_t len)
{
	for (unsigned i = 0; i < sizeof(rt_ioprio_names) / sizeof(rt_ioprio_names[0]); i++)
		if (strlen(rt_ioprio_names[i]) == len &&
		    strncasecmp(s, rt_ioprio_names[i], len) == 0)
			return (int)i;
	return -EINVAL;
}

int rt_ioprio_parse(const char *s, uint16_t *out)
{
	const char *colon;
	unsigned level;
	int cls;

	if (!s)
		return -EINVAL;
	colon = strchr(s, ':');
	cls = rt_ioprio_class_of(s, colon ? (size_t)(colon - s) : strlen(s));
	if (cls < 0)
		return -EINVAL;
	if (!colon) {
		/* A bare class: be and rt take the middle level, as the kernel
		 * does when only a class is given. */
		level = cls == RT_IOPRIO_CLASS_NONE ? 4 : cls == RT_IOPRIO_CLASS_IDLE ? 0 : 4;
	} else {
		if (colon[1] < '0' || colon[1] > '7' || colon[2] != '\0')
			return -EINVAL;
		level = (unsigned)(colon[1] - '0');
	}
	if (!rt_ioprio_valid(RT_IOPRIO(cls, level)))
		return -EINVAL;
	*out = RT_IOPRIO(cls, level);
	return 0;
}

const char *rt_ioprio_str(uint16_t ioprio, char *buf, size_t len)
{
	unsigned cls = RT_IOPRIO_CLASS(ioprio), level = RT_IOPRIO_LEVEL(ioprio);

	if (cls > RT_IOPRIO_CLASS_IDLE)
		snprintf(buf, len, "?%u:%u", cls, level);
	else if (cls == RT_IOPRIO_CLASS_NONE || (cls == RT_IOPRIO_CLASS_IDLE && level == 0))
		snprintf(buf, len, "%s", rt_ioprio_names[cls]);
	else
		snprintf(buf, len, "%s:%u", rt_ioprio_names[cls], level);
	return buf;
}
