# bash completion for ujbd (installed as share/bash-completion/completions/ujbd).
#
# The one idea: the tool is the only source. The verbs come from `ujbd help`,
# each verb's options from its --help, so a new verb or option needs no edit
# here (tests/tools/completion.sh checks that this stays so).

# The verbs `ujbd help` lists.
_ujbd_verbs()
{
	"$1" help 2>/dev/null | awk '/^verbs:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }'
}

# The long options of a verb's --help; those that take a value end in "=".
_ujbd_options()
{
	"$1" "$2" --help 2>/dev/null | grep -o -- '--[a-z0-9][a-z0-9-]*=\?' |
		awk '{ n = $0; sub(/=$/, "", n); if ($0 ~ /=$/) v[n] = 1; else if (!(n in v)) v[n] = 0 }
		     END { for (n in v) print n (v[n] ? "=" : "") }' | grep -vx -- '--help'
}

_ujbd()
{
	local cmd=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} verb=${COMP_WORDS[1]-}
	local prev=${COMP_WORDS[COMP_CWORD-1]-}
	COMPREPLY=()
	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=($(compgen -W "help $(_ujbd_verbs "$cmd")" -- "$cur"))
		return
	fi
	if [[ $verb == help ]]; then
		[[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W "$(_ujbd_verbs "$cmd")" -- "$cur"))
		return
	fi
	# "--data=PATH": bash splits the word at "=" (COMP_WORDBREAKS)
	if [[ $prev == = || $cur == *=* ]]; then
		COMPREPLY=($(compgen -f -- "${cur#*=}"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_ujbd_options "$cmd" "$verb")" -- "$cur"))
		[[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	case $verb in
	bench) COMPREPLY=($(compgen -W "fsync-loop group-commit handles" -- "$cur")) ;;
	lab) [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W "fsck" -- "$cur")) ;;
	devbench) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}
complete -F _ujbd ujbd
