package browser

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CheckDevice reports whether name is a device of the Playwright driver in
// driverDir (its package/lib/server/deviceDescriptorsSource.json), so a
// wrong --device stops the server before the browser starts. With no
// driver installed yet it cannot tell, and says nothing: the first
// context will.
func CheckDevice(driverDir, name string) error {
	dir, _, err := FindDriver(driverDir)
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "package", "lib", "server", "deviceDescriptorsSource.json"))
	if err != nil {
		return nil
	}
	var devices map[string]json.RawMessage
	if json.Unmarshal(b, &devices) != nil {
		return nil
	}
	if _, ok := devices[name]; ok {
		return nil
	}
	var near []string
	first := strings.ToLower(strings.Fields(name + " x")[0])
	for d := range devices {
		if strings.HasPrefix(strings.ToLower(d), first) && !strings.Contains(d, "landscape") {
			near = append(near, d)
		}
	}
	slices.Sort(near)
	if len(near) > 8 {
		near = near[:8]
	}
	msg := fmt.Sprintf("%q is not a Playwright device (the names are those of Playwright's device list, like \"iPhone 15\" or \"Pixel 7\")", name)
	if len(near) > 0 {
		msg += "; close names: " + strings.Join(near, ", ")
	}
	return fmt.Errorf("%s", msg)
}
