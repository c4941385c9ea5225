// Package redact masks secrets in what flowteam writes: audit records, logs, span
// attributes, saved snapshots and the command line's output. One Redactor holds the
// rules and every writer of text uses it; the marker is always Mask ("***").
//
//	r := redact.New(redact.Secrets("employee"), redact.Patterns(regexp.MustCompile(`sk-[a-z0-9]+`)))
//	vars := map[string]any{"employee": "Ada Lovelace", "apiKey": "k-123456"}
//	r = r.ForVars(vars) // learn the secret values in scope
//	r.Map(vars)                                // {"employee": "***", "apiKey": "***"}
//	r.String("waiting for Ada Lovelace, sk-9") // "waiting for ***, ***"
//
// # Rules
//
// By key: the value under a sensitive key is masked whole, in maps at any depth. A
// key is sensitive when, ignoring case and the separators '_', '-', '.' and ' ', it
// ends with one of DefaultKeys or of the keys given with Keys ("X-Api-Key",
// "csrf_token"), or equals the name of a variable declared with Secrets.
//
// By value: the values of the variables declared secret, and the values under
// sensitive keys (an apiKey variable's value is a secret too), are masked wherever
// they appear as a substring of a string written, and so are their JSON-escaped and
// URL-escaped forms. Values shorter than MinValueLen (4 bytes) are masked by key
// only: masking every "ok" or "42" would garble the text and still give the value
// away.
//
// By pattern: every match of the regular expressions given with Patterns is masked,
// as the OpenTelemetry Collector's redaction processor (blocked_values) does.
//
// # Where the values come from
//
// A Redactor is immutable. The secret values are found at write time: a writer that
// has the variables in scope (the audit's node context, a snapshot being saved, the
// command line's result) calls ForVars with them and uses the Redactor it returns,
// which is r itself when there is nothing new to mask. So a value is masked in the
// texts written while the run that holds it is in scope, and one run's secrets do not
// accumulate in a Redactor shared by a long-lived process. Values known in advance
// can be given with Values.
//
// Free text is masked by value and by pattern only: a "password=..." in an error
// message is not recognised by its key. Declare the variable secret, or add a
// pattern, to mask such text.
package redact
