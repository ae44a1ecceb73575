package roles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The keys of playwright-mcp's config file that mean what a retrace flag
// means, so a file written for it works here. They sit beside roles and
// browserEndpoints; each gives a flag's value when the command line and
// the environment give none.
type pwBrowser struct {
	Isolated      *bool    `json:"isolated,omitempty"`
	CDPEndpoint   string   `json:"cdpEndpoint,omitempty"`
	InitScript    []string `json:"initScript,omitempty"`
	LaunchOptions *struct {
		Headless       *bool  `json:"headless,omitempty"`
		ExecutablePath string `json:"executablePath,omitempty"`
		Proxy          *struct {
			Server string `json:"server"`
			Bypass string `json:"bypass,omitempty"`
		} `json:"proxy,omitempty"`
	} `json:"launchOptions,omitempty"`
	ContextOptions *struct {
		Viewport *struct {
			Width  int `json:"width"`
			Height int `json:"height"`
		} `json:"viewport,omitempty"`
		UserAgent         string `json:"userAgent,omitempty"`
		IgnoreHTTPSErrors *bool  `json:"ignoreHTTPSErrors,omitempty"`
	} `json:"contextOptions,omitempty"`
}

type pwServer struct {
	Port         int      `json:"port,omitempty"`
	Host         string   `json:"host,omitempty"`
	AllowedHosts []string `json:"allowedHosts,omitempty"`
}

type pwNetwork struct {
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	BlockedOrigins []string `json:"blockedOrigins,omitempty"`
}

type pwTimeouts struct {
	Action     int `json:"action,omitempty"`
	Navigation int `json:"navigation,omitempty"`
}

// FlagValues returns the flag values the config file at path gives under
// playwright-mcp's names: flag name → value as the command line would
// take it; a repeatable flag's values are joined by newlines.
func FlagValues(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	out := map[string]string{}
	set := func(flag, v string) {
		if v != "" {
			out[flag] = v
		}
	}
	setBool := func(flag string, b *bool) {
		if b != nil {
			out[flag] = strconv.FormatBool(*b)
		}
	}
	if b := f.Browser; b != nil {
		setBool("isolated", b.Isolated)
		set("cdp-endpoint", b.CDPEndpoint)
		set("init-script", strings.Join(b.InitScript, "\n"))
		if l := b.LaunchOptions; l != nil {
			setBool("headless", l.Headless)
			set("executable-path", l.ExecutablePath)
			if l.Proxy != nil {
				set("proxy-server", l.Proxy.Server)
				set("proxy-bypass", l.Proxy.Bypass)
			}
		}
		if c := b.ContextOptions; c != nil {
			if c.Viewport != nil {
				set("viewport-size", fmt.Sprintf("%dx%d", c.Viewport.Width, c.Viewport.Height))
			}
			set("user-agent", c.UserAgent)
			setBool("ignore-https-errors", c.IgnoreHTTPSErrors)
		}
	}
	if s := f.Server; s != nil {
		if s.Port != 0 {
			set("port", strconv.Itoa(s.Port))
		}
		set("host", s.Host)
		set("allowed-hosts", strings.Join(s.AllowedHosts, ","))
	}
	if n := f.Network; n != nil {
		set("allowed-origins", strings.Join(n.AllowedOrigins, ";"))
		set("blocked-origins", strings.Join(n.BlockedOrigins, ";"))
	}
	if t := f.Timeouts; t != nil {
		if t.Action > 0 {
			set("timeout-action", strconv.Itoa(t.Action))
		}
		if t.Navigation > 0 {
			set("timeout-navigation", strconv.Itoa(t.Navigation))
		}
	}
	set("caps", strings.Join(f.Capabilities, ","))
	set("output-dir", f.OutputDir)
	return out, nil
}
