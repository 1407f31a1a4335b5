/* PLACEHOLDER: replaced by the real implementation of 'ujbd recover'. */
#include "cli.h"

int cmd_recover(int argc, char **argv)
{
	(void)argc;
	cli_err(argv[0], "not built yet");
	return EXIT_USAGE;
}
