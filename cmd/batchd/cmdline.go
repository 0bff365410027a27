package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/batchd/batchd/internal/config"
)

// cmdLine is the command line of a subcommand that reads the
// configuration: its arguments and flags, --config among them, parsed,
// checked and the configuration loaded one way for every such subcommand,
// so that each answers -h, a usage mistake and a configuration that does
// not load with the same words and exit codes. configured makes it; the
// subcommand declares its own flags on the embedded FlagSet.
type cmdLine struct {
	*flag.FlagSet
	env     *environ
	args    []string // the arguments after the command's name
	cfgPath *string
	needs   []requirement
}

// requirement is a condition on the parsed flags and what the command
// line lacks when it does not hold.
type requirement struct {
	ok  func() bool
	msg string
}

// configured makes `batchd name`, a subcommand that reads the
// configuration: run gets its command line (its arguments, --config
// declared) to add its own flags to and parse. usage is the synopsis after
// the name, as -h prints it.
func configured(name, summary, usage string, run func(context.Context, *environ, *cmdLine) error) command {
	return command{name: name, summary: summary, run: func(ctx context.Context, env *environ, args []string) error {
		fs := newFlags(env, name, usage)
		return run(ctx, env, &cmdLine{FlagSet: fs, env: env, args: args, cfgPath: configFlag(fs)})
	}}
}

// require adds a condition the parsed flags must meet (a required flag
// given); parse checks each in order and refuses the first that fails
// with msg and the usage.
func (c *cmdLine) require(ok func() bool, msg string) {
	c.needs = append(c.needs, requirement{ok: ok, msg: msg})
}

// parse parses the arguments (a mistake is errUsage, -h flag.ErrHelp),
// then checks the requirements, before anything is read or opened.
func (c *cmdLine) parse() error {
	if err := parseFlags(c.FlagSet, c.args); err != nil {
		return err
	}
	for _, r := range c.needs {
		if !r.ok() {
			return c.badUsage("%s", r.msg)
		}
	}
	return nil
}

// config parses the arguments and then loads the configuration.
func (c *cmdLine) config() (*config.Config, error) {
	if err := c.parse(); err != nil {
		return nil, err
	}
	return c.load()
}

// load reads the configuration named by --config, $BATCHD_CONFIG or the
// default path.
func (c *cmdLine) load() (*config.Config, error) {
	return loadConfig(c.env, *c.cfgPath)
}

// path is the configuration file's path, as load reads it.
func (c *cmdLine) path() string {
	return config.Path(*c.cfgPath, c.env.getenv)
}

// badUsage says what is wrong with the command line, prints the usage and
// returns errUsage (exit 2).
func (c *cmdLine) badUsage(format string, a ...any) error {
	err := c.mistake(format, a...)
	c.Usage()
	return err
}

// mistake says what is wrong with the command line and returns errUsage,
// without the usage, for a mistake its message explains by itself.
func (c *cmdLine) mistake(format string, a ...any) error {
	fmt.Fprintf(c.env.stderr, "batchd %s: %s\n", c.Name(), fmt.Sprintf(format, a...))
	return errUsage
}
