module github.com/flowteam/flowteam

go 1.26.8

require (
	github.com/expr-lang/expr v1.17.8
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
