"""llama.cpp: the embedded server (`local`), any GGUF file (`gguf`), the build check (`build`,
`doctor`, `probe`) and the server's entry point (`entry`)."""
