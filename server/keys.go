package server

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// keyNames are the key names Playwright knows besides single characters,
// by lower case.
var keyNames = func() map[string]string {
	m := map[string]string{}
	names := []string{"Backquote", "Minus", "Equal", "Backslash", "Backspace", "Tab", "Delete", "Escape",
		"ArrowDown", "End", "Enter", "Home", "Insert", "PageDown", "PageUp", "ArrowRight", "ArrowUp", "ArrowLeft",
		"Shift", "Control", "Alt", "Meta", "ShiftLeft", "ShiftRight", "ControlLeft", "ControlRight", "AltLeft", "AltRight",
		"MetaLeft", "MetaRight", "ControlOrMeta", "CapsLock", "Space", "NumLock", "ScrollLock", "Pause", "ContextMenu",
		"BracketLeft", "BracketRight", "Semicolon", "Quote", "Comma", "Period", "Slash", "IntlBackslash"}
	for i := 1; i <= 24; i++ {
		names = append(names, fmt.Sprintf("F%d", i))
	}
	for c := '0'; c <= '9'; c++ {
		names = append(names, "Digit"+string(c), "Numpad"+string(c))
	}
	for c := 'A'; c <= 'Z'; c++ {
		names = append(names, "Key"+string(c))
	}
	for _, n := range names {
		m[strings.ToLower(n)] = n
	}
	// What models write for the same keys.
	for alias, n := range map[string]string{"ctrl": "Control", "cmd": "Meta", "command": "Meta", "option": "Alt",
		"esc": "Escape", "return": "Enter", "del": "Delete", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
		"right": "ArrowRight", "pgup": "PageUp", "pgdn": "PageDown", "space": " ", "spacebar": " "} {
		m[alias] = n
	}
	return m
}()

// normalizeKey checks a key or combination and writes it the way
// Playwright wants it; "" means it is not a key.
func normalizeKey(key string) (string, string) {
	if key == "" {
		return "", "the key is empty"
	}
	if utf8.RuneCountInString(key) == 1 {
		return key, ""
	}
	var parts []string
	rest := key
	for rest != "" {
		// A "+" right after a separator is the plus key itself.
		i := strings.Index(rest[1:], "+")
		if i < 0 {
			parts, rest = append(parts, rest), ""
			break
		}
		part := rest[:i+1]
		rest = rest[i+2:]
		if rest == "" {
			return "", fmt.Sprintf("%q ends with + and no key after it", key)
		}
		parts = append(parts, part)
	}
	for i, p := range parts {
		if t := strings.TrimSpace(p); t != "" {
			p = t // "Control + a" as well as "Control+a"
		}
		if utf8.RuneCountInString(p) == 1 {
			parts[i] = p
			continue
		}
		n, ok := keyNames[strings.ToLower(p)]
		if !ok {
			return "", fmt.Sprintf("%q is not a key name", p)
		}
		parts[i] = n
	}
	return strings.Join(parts, "+"), ""
}
