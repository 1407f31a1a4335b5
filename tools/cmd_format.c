/* PLACEHOLDER: replaced by the real implementation of 'ujbd format'. */
#include "cli.h"

int cmd_format(int argc, char **argv)
{
	(void)argc;
	cli_err(argv[0], "not built yet");
	return EXIT_USAGE;
}
