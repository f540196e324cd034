// Command yaml-scalars prints how kubectl's YAML reader (sigs.k8s.io/yaml, YAML 1.1 through go.yaml.in/yaml/v2) turns
// plain scalars into JSON, as a value and as a mapping key: the table test/fixtures/yaml/kubectl-scalars.json, which
// lib/rule-files is tested against. Regenerate it with `go run . > ../fixtures/yaml/kubectl-scalars.json` in this folder.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// The plain scalars YAML 1.1 and 1.2 read differently, or that a reader may mistake for another type.
var scalars = []string{
	"on", "On", "ON", "off", "Off", "OFF",
	"yes", "Yes", "YES", "no", "No", "NO",
	"y", "Y", "n", "N",
	"true", "True", "TRUE", "false", "False", "FALSE", "tRUE",
	"~", "null", "Null", "NULL", "",
	"0777", "0o777", "012", "08", "0x1F", "0b101", "+12", "-0", "1_000", "0",
	"1:20", "1:20:30", "190:20:30.15", "-1:30",
	"1e3", "1.5", ".5", "1.", "+.inf", "-.Inf", ".nan", "1e400",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14T21:59:43Z",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616",
	"=", "<<", "example.com/spot", "300",
}

// One row: the scalar, and the JSON kubectl makes of it as a value and as a key (or the error it reports).
type row struct {
	Scalar   string          `json:"scalar"`
	Value    json.RawMessage `json:"value,omitempty"`
	ValueErr string          `json:"valueError,omitempty"`
	Key      *string         `json:"key,omitempty"`
	KeyErr   string          `json:"keyError,omitempty"`
}

// read turns one YAML document into the JSON object kubectl makes of it.
func read(text string) (map[string]json.RawMessage, error) {
	out, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	err = json.Unmarshal(out, &doc)
	return doc, err
}

func main() {
	rows := make([]row, 0, len(scalars))
	for _, scalar := range scalars {
		r := row{Scalar: scalar}
		if doc, err := read("v: " + scalar + "\n"); err != nil {
			r.ValueErr = err.Error()
		} else {
			r.Value = doc["v"]
		}
		if doc, err := read(scalar + ": v\n"); err != nil {
			r.KeyErr = err.Error()
		} else {
			for key := range doc {
				k := key
				r.Key = &k
			}
		}
		rows = append(rows, r)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(rows); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
