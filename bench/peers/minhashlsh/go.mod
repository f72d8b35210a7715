module github.com/neardup/neardup/bench/peers/minhashlsh

go 1.26.8

require github.com/ekzhu/minhash-lsh v0.0.0-20171225071031-5c06ee8586a1

require (
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33 // indirect
	github.com/dgryski/go-minhash v0.0.0-20170608043002-7fe510aff544 // indirect
	github.com/dgryski/go-spooky v0.0.0-20170606183049-ed3d087f40e2 // indirect
)
