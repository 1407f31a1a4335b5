/* PLACEHOLDER: replaced by the real implementation of 'ujbd info'. */
#include "cli.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	cli_err(argv[0], "not built yet");
	return EXIT_USAGE;
}
