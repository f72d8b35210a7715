//go:build sizefloor && !template

package main

func execTemplate(any) error { return nil }
