/* PLACEHOLDER: replaced by the real implementation of 'ujbd write'. */
#include "cli.h"

int cmd_write(int argc, char **argv)
{
	(void)argc;
	cli_err(argv[0], "not built yet");
	return EXIT_USAGE;
}
