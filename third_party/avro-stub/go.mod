module github.com/hamba/avro/v2

go 1.21
