package interceptor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flowteam/flowteam/interceptor"
)

// XML attributes may carry a namespace prefix (x:name, x:value): the name member
// still names the secret in the value member beside it, in either order.
func TestRedactorStringXMLNamespacedAttrs(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`<x:property x:name="password" x:value="hunter2"/>`, `<x:property x:name="password" x:value="***"/>`},
		{`<x:property x:value="hunter2" x:name="password"/>`, `<x:property x:value="***" x:name="password"/>`},
		{`<property name="token" x:value="abc"/>`, `<property name="token" x:value="***"/>`},
		{`<p xmlns:x="urn:a" x:name="api_key" x:type="s" x:value="k-1"/>`, `<p xmlns:x="urn:a" x:name="api_key" x:type="s" x:value="***"/>`},
		{`<x:entry x:key="db.password">hunter2</x:entry>`, `<x:entry x:key="db.password">***</x:entry>`},
		{`<ns:password>hunter2</ns:password>`, `<ns:password>***</ns:password>`},
		{`<x:user x:password="hunter2"/>`, `<x:user x:password="***"/>`},
		// Not a sensitive name: nothing to mask.
		{`<x:property x:name="mode" x:value="fast"/>`, `<x:property x:name="mode" x:value="fast"/>`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A form body encodes a space as '+': "password = hunter2" in a form value is
// password+%3D+hunter2. The '+' around an encoded separator is a blank; elsewhere it
// is part of the value (password%3Dab+cd masks all of ab+cd).
func TestRedactorStringFormSpaces(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`password+%3D+hunter2`, `password+%3D+***`},
		{`q=password+%3D+hunter2&page=2`, `q=password+%3D+***&page=2`},
		{`password%20%3D%20hunter2`, `password%20%3D%20***`},
		{`msg=token%3A++abc`, `msg=token%3A++***`},
		{`password%3Dab+cd&x=1`, `password%3D***&x=1`},
		{`q=password%2B%253D%2Bhunter2`, `q=password%2B%253D%2B***`},
		// No key before the separator: nothing to mask.
		{`q=a+%3D+b&c=d+e`, `q=a+%3D+b&c=d+e`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// BenchmarkRedactStringNamePairs redacts text where every '=' follows a name key
// ("name=name=..."): each is a name member whose value must not be scanned to its end,
// or redaction takes time quadratic in the text's length (3 s for 100 KB).
func BenchmarkRedactStringNamePairs(b *testing.B) {
	r := interceptor.NewRedactor()
	msg := strings.Repeat("name=", 20000)
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}

// SQL sets an account's password with IDENTIFIED BY (MySQL, Oracle), IDENTIFIED WITH
// <plugin> BY or AS (MySQL), and REPLACE quotes the current one: those values are
// masked. Upper-case keywords take a bare value too (Oracle's IDENTIFIED BY pw);
// others only a single-quoted one, as prose says "identified by its id".
func TestRedactorStringSQLIdentifiedBy(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`CREATE USER bob IDENTIFIED BY 'hunter2'`, `CREATE USER bob IDENTIFIED BY '***'`},
		{`ALTER USER bob IDENTIFIED BY hunter2`, `ALTER USER bob IDENTIFIED BY ***`},
		{`ALTER USER bob IDENTIFIED BY hunter2;`, `ALTER USER bob IDENTIFIED BY ***;`},
		{`ALTER USER bob IDENTIFIED BY "hunter2" ACCOUNT UNLOCK`, `ALTER USER bob IDENTIFIED BY "***" ACCOUNT UNLOCK`},
		{`CREATE USER bob IDENTIFIED WITH mysql_native_password BY 'x'`, `CREATE USER bob IDENTIFIED WITH mysql_native_password BY '***'`},
		{`CREATE USER 'bob'@'%' IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$hash'`, `CREATE USER 'bob'@'%' IDENTIFIED WITH 'caching_sha2_password' AS '***'`},
		{`ALTER USER bob IDENTIFIED BY 'new1' REPLACE 'old1' RETAIN CURRENT PASSWORD`, `ALTER USER bob IDENTIFIED BY '***' REPLACE '***' RETAIN CURRENT PASSWORD`},
		{"CREATE USER a IDENTIFIED BY 'x1', b IDENTIFIED BY 'x2'", "CREATE USER a IDENTIFIED BY '***', b IDENTIFIED BY '***'"},
		{"CREATE USER bob\n  IDENTIFIED BY\n  'it''s'", "CREATE USER bob\n  IDENTIFIED BY\n  '***'"},
		{`create user bob identified by 'hunter2'`, `create user bob identified by '***'`},
		{`Error 1396: Operation failed for query "CREATE USER bob IDENTIFIED BY 'pw'"`, `Error 1396: Operation failed for query "CREATE USER bob IDENTIFIED BY '***'"`},
		{`CREATE USER bob IDENTIFIED BY VALUES 'S:ABC'`, `CREATE USER bob IDENTIFIED BY VALUES '***'`},
		// No password: nothing to mask.
		{`CREATE USER bob IDENTIFIED BY RANDOM PASSWORD`, `CREATE USER bob IDENTIFIED BY RANDOM PASSWORD`},
		{`CREATE USER bob IDENTIFIED EXTERNALLY`, `CREATE USER bob IDENTIFIED EXTERNALLY`},
		{`a node identified by its id`, `a node identified by its id`},
		{`the run identified by "r-1" ended`, `the run identified by "r-1" ended`},
		{`UNIDENTIFIED BY hunter2`, `UNIDENTIFIED BY hunter2`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Kubernetes names a Secret by kind, quoted name and status (`secret "db-creds" not
// found`): the name is not a secret value, and masking it would lose what the message
// is about. A token or password quoted before a status is still its value, and so is
// a value that is no object name.
func TestRedactorStringResourceName(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`Secret "db-creds" not found`, `Secret "db-creds" not found`},
		{`Error: secret "db-creds" not found`, `Error: secret "db-creds" not found`},
		{`MountVolume.SetUp failed for volume "v" : secret "prod/db.creds" not found`, `MountVolume.SetUp failed for volume "v" : secret "prod/db.creds" not found`},
		{`Secret "db-creds" is invalid: data[x]: too long`, `Secret "db-creds" is invalid: data[x]: too long`},
		{`secret "tls-1" already exists`, `secret "tls-1" already exists`},
		// Still masked: the value of a token or password, a value that is no
		// object name, or no status after it.
		{`token "abc" expired`, `token "***" expired`},
		{`token "abc" not found`, `token "***" not found`},
		{`client_secret "abc" not found`, `client_secret "***" not found`},
		{`secret "Tr0ub4dor&3" not found`, `secret "***" not found`},
		{`secret "db-creds" rotated`, `secret "***" rotated`},
		{`secret 'db-creds' not found`, `secret '***' not found`},
		{`secret: "db-creds" not found`, `secret: "***" not found`},
		{`client secret "abc" not found`, `client secret "***" not found`},
		{`login failed: secret "abc" is invalid`, `login failed: secret "***" is invalid`},
		{`secret "abc" is forbidden by policy`, `secret "***" is forbidden by policy`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// Text cut short after a key and a quote has no value to look at and no name.
func TestRedactorStringCutShort(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, in := range []string{`secret "`, `secret ""`, `secret "a`, `secret "a" `, `IDENTIFIED BY "`, `IDENTIFIED BY '`, `IDENTIFIED WITH`, `x:`, `<x:a x:`} {
		assert.NotPanics(t, func() { r.String(in) }, "%q", in)
	}
}

// A secret key (Django's and Flask's SECRET_KEY, S3's and MinIO's secret_key,
// Hadoop's fs.s3a.secret.key) and a passphrase (of an SSH or PGP key) are secrets:
// the default keys cover them, as they do an access key and a private key.
func TestRedactorDefaultKeysSecretKey(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`SECRET_KEY=django-insecure-abc`, `SECRET_KEY=***`},
		{`secret_key: abc`, `secret_key: ***`},
		{`MINIO_SECRET_KEY=abc`, `MINIO_SECRET_KEY=***`},
		{`<property><name>fs.s3a.secret.key</name><value>abc</value></property>`, `<property><name>fs.s3a.secret.key</name><value>***</value></property>`},
		{`ssh_passphrase: abc`, `ssh_passphrase: ***`},
		{`{"passphrase":"abc"}`, `{"passphrase":"***"}`},
		// A word that ends with neither stays.
		{`primary_key=id sort_key=ts`, `primary_key=id sort_key=ts`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
	assert.Equal(t, map[string]any{"secretKey": interceptor.Mask, "gpg-passphrase": interceptor.Mask, "key": "k"},
		r.Map(map[string]any{"secretKey": "x", "gpg-passphrase": "y", "key": "k"}))
}

// More forms a value takes after its key: MySQL 5's IDENTIFIED BY PASSWORD 'hash',
// YAML's node properties before a value (a tag, !!str, forcing a number to be a
// string; an anchor, &name, to reuse it), and TOML's and Python's triple-quoted
// strings.
func TestRedactorStringValueForms(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`GRANT ALL ON *.* TO 'bob'@'%' IDENTIFIED BY PASSWORD '*6BB4837EB743'`, `GRANT ALL ON *.* TO 'bob'@'%' IDENTIFIED BY PASSWORD '***'`},
		{"password: !!str 1234\nuser: bob", "password: !!str ***\nuser: bob"},
		{"password: &pw hunter2\nuser: bob", "password: &pw ***\nuser: bob"},
		{"password: !!str &pw 'it''s'", "password: !!str &pw '***'"},
		{"private_key: !!binary |\n  AAAA\n  BBBB\nuser: bob", "private_key: !!binary ***\nuser: bob"},
		{`password = """hunter2"""` + "\nuser = 1", `password = """***"""` + "\nuser = 1"},
		{"token = '''a\nb'''\nuser = 1", "token = '''***'''\nuser = 1"},
		{`password = ""`, `password = "***"`},
		// Not a property: a query string's next pair, an empty value.
		{`?password=&user=bob next`, `?password=&user=bob next`},
		{"password: &pw\nuser: bob", "password: &pw\nuser: bob"},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
}

// A Go MySQL DSN (go-sql-driver/mysql) holds its password as a URL's userinfo does,
// without the scheme: user:password@tcp(host)/db. It is masked as the value of
// "password", as the URL's is; a colon in other text is not a DSN.
func TestRedactorStringMySQLDSN(t *testing.T) {
	r := interceptor.NewRedactor()
	for _, c := range []struct{ in, want string }{
		{`dial: bob:hunter2@tcp(127.0.0.1:3306)/app?parseTime=true`, `dial: bob:***@tcp(127.0.0.1:3306)/app?parseTime=true`},
		{`open "bob:p@ss:w@tcp(db)/x": refused`, `open "bob:***@tcp(db)/x": refused`},
		{`dsn=bob:hunter2@unix(/tmp/mysql.sock)/app`, `dsn=bob:***@unix(/tmp/mysql.sock)/app`},
		{`bob:hunter2@/app`, `bob:***@/app`},
		// Not a DSN: nothing to mask.
		{`note: see bob@/x`, `note: see bob@/x`},
		{`a:b:c d:e@example.com`, `a:b:c d:e@example.com`},
		{`git@github.com:org/repo.git`, `git@github.com:org/repo.git`},
	} {
		assert.Equal(t, c.want, r.String(c.in), "%q", c.in)
	}
	assert.Equal(t, "bob:hunter2@tcp(db)/x", interceptor.NewRedactorKeys("token").String("bob:hunter2@tcp(db)/x"),
		"the password of a DSN is the value of the key password")
}
