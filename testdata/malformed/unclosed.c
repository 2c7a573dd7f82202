// expect: error 2 never closed
/*@kgate
name: relu
